/* The Joe–Kuo direction-number table behind the Sobol' sampler (sa internal). */
#ifndef WSISA_SA_SOBOL_TABLE_H
#define WSISA_SA_SOBOL_TABLE_H

#include <stdint.h>

#define WSISA__SOBOL_ROWS 1023   /* dimensions 2..1024 */
#define WSISA__SOBOL_MAXDEG 13

typedef struct wsisa__sobol_row {
  uint8_t s;                          /* degree of the primitive polynomial */
  uint16_t a;                         /* its inner coefficients, MSB first */
  uint16_t m[WSISA__SOBOL_MAXDEG];    /* initial direction integers m_1..m_s */
} wsisa__sobol_row;

extern const wsisa__sobol_row wsisa__sobol_rows[WSISA__SOBOL_ROWS];

#endif
