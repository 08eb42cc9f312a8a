/* The 15 segmentation parameters come from one table (sa/segmentation.c):
 * the workflow's enum indexes its rows, and messages list its names. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/workflow/workflow.h"
#include "sa/sa.h"

Test(params, the_enum_indexes_the_table) {
  static const struct {
    int index;
    const char *name;
  } named[] = {{WSISA_P_B, "B"},
               {WSISA_P_G, "G"},
               {WSISA_P_R, "R"},
               {WSISA_P_T1, "T1"},
               {WSISA_P_T2, "T2"},
               {WSISA_P_G1, "G1"},
               {WSISA_P_G2, "G2"},
               {WSISA_P_MIN_SIZE, "min_size"},
               {WSISA_P_MAX_SIZE, "max_size"},
               {WSISA_P_MIN_SIZE_PL, "min_size_pl"},
               {WSISA_P_MIN_SIZE_SEG, "min_size_seg"},
               {WSISA_P_MAX_SIZE_SEG, "max_size_seg"},
               {WSISA_P_FILL_HOLES_CONN, "fill_holes_conn"},
               {WSISA_P_RECON_CONN, "recon_conn"},
               {WSISA_P_WATERSHED_CONN, "watershed_conn"}};
  cr_assert_eq(sizeof named / sizeof *named, WSISA_SEG_NPARAMS);
  for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
    cr_expect_str_eq(wsisa_seg_param_name(named[i].index), named[i].name);
    cr_expect_eq(wsisa_seg_defaults()[named[i].index], wsisa_sa_seg_find(named[i].name)->def);
  }
}

Test(params, an_unknown_name_lists_the_tables_names) {
  const wsisa_sa_seg_param *p;
  wsisa_err e = WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sa_seg_lookup("G3", &p, &e), WSISA_EUSAGE);
  char want[1024] = "G3: not a segmentation parameter (they are ";
  for (size_t i = 0; i < WSISA_SA_NSEG; i++) {
    strcat(want, wsisa_sa_seg_params[i].name);
    strcat(want, i + 1 < WSISA_SA_NSEG ? ", " : ")");
  }
  cr_expect_str_eq(e.msg, want);
  e = (wsisa_err)WSISA_ERR_INIT;
  cr_assert_eq(wsisa_sa_seg_lookup("minS", &p, &e), WSISA_EUSAGE);
  cr_expect(strstr(e.msg, "did you mean min_size?"), "%s", e.msg);
}
