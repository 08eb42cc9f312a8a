/* What the machine offers, read with hwloc (cores, hardware threads, NUMA
 * nodes, CPU model) plus the kernel's memory figures (/proc/meminfo: MemTotal,
 * and MemAvailable, free memory plus the page cache the kernel can reclaim,
 * which hwloc does not report). The defaults of a
 * study are derived from it (docs/architecture.md): the memory limit stays below what
 * is available; workers come from StarPU, which reads the same topology with
 * hwloc and honours STARPU_NCPU. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "core/core.h"

/* MemTotal and MemAvailable of /proc/meminfo, in bytes (0 when unknown). */
static void meminfo(uint64_t *total, uint64_t *available) {
  FILE *f = fopen("/proc/meminfo", "r");
  unsigned long long kib;
  char line[256];
  *total = *available = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (sscanf(line, "MemTotal: %llu kB", &kib) == 1) *total = (uint64_t)kib * 1024;
    if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) *available = (uint64_t)kib * 1024;
  }
  if (f) fclose(f);
  if (!*available) {
    /* no /proc: free pages, a smaller but safe estimate */
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) *available = (uint64_t)pages * (uint64_t)page;
  }
}

void wsisa_machine_read(wsisa_machine *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->cpu_model, sizeof m->cpu_model, "unknown CPU");
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) {
      int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      m->cores = n > 0 ? n : 0;
      n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
      m->pus = n > 0 ? n : 0;
      n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
      m->numa_nodes = n > 0 ? n : 1;
      hwloc_obj_t root = hwloc_get_root_obj(topo);
      m->memory_total = root ? root->total_memory : 0;
      hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
      const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
      if (!model && root) model = hwloc_obj_get_info_by_name(root, "CPUModel");
      if (model) snprintf(m->cpu_model, sizeof m->cpu_model, "%s", model);
    }
    hwloc_topology_destroy(topo);
  }
  if (!m->pus) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->pus = n > 0 ? (int)n : 1;
  }
  if (!m->cores) m->cores = m->pus;
  /* the kernel's total wins: in containers and VMs hwloc's NUMA memory can
   * describe the host or a stale node, not what this process may use */
  uint64_t total;
  meminfo(&total, &m->memory_available);
  if (total) m->memory_total = total;
}

const char *wsisa_bytes_text(double bytes, char *buf, size_t cap) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  while (u + 1 < sizeof units / sizeof *units && bytes >= 1024.0) bytes /= 1024.0, u++;
  /* whole numbers where they are exact or large, one decimal otherwise */
  if (u == 0 || bytes >= 100 || bytes == (double)(uint64_t)bytes)
    snprintf(buf, cap, "%.0f %s", bytes, units[u]);
  else snprintf(buf, cap, "%.1f %s", bytes, units[u]);
  return buf;
}

uint64_t wsisa_memory_available(void) {
  uint64_t total, available;
  meminfo(&total, &available);
  return available;
}

uint64_t wsisa_rss_now(void) {
  /* statm's second field: resident pages */
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long size = 0, resident = 0;
  int n = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;
  if (f) fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}
