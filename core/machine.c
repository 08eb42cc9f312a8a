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

/* CPUs one cgroup folder's quota grants (cgroup v2 cpu.max "QUOTA PERIOD",
 * v1 cpu.cfs_quota_us and cpu.cfs_period_us), rounded up; 0: no quota. */
static int quota_cpus(const char *dir, int v2) {
  char path[WSISA_PATH_MAX];
  long long quota = -1, period = 0;
  FILE *f;
  if (v2) {
    if (wsisa_path_fmt(path, "%s/cpu.max", dir) == 0 && (f = fopen(path, "r"))) {
      if (fscanf(f, "%lld %lld", &quota, &period) != 2) quota = -1;
      fclose(f);
    }
  } else {
    if (wsisa_path_fmt(path, "%s/cpu.cfs_quota_us", dir) == 0 && (f = fopen(path, "r"))) {
      if (fscanf(f, "%lld", &quota) != 1) quota = -1;
      fclose(f);
    }
    if (wsisa_path_fmt(path, "%s/cpu.cfs_period_us", dir) == 0 && (f = fopen(path, "r"))) {
      if (fscanf(f, "%lld", &period) != 1) period = 0;
      fclose(f);
    }
  }
  if (quota <= 0 || period <= 0) return 0; /* "max" or -1: none */
  return (int)((quota + period - 1) / period);
}

/* The smallest quota on the way from this process's cgroup (the cpu
 * controller's in v1, the unified one in v2) up to the root; 0: none. */
static int cgroup_cpus(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  /* a line: the hierarchy's number, its controllers and the cgroup's path */
  char line[WSISA_PATH_MAX + 256], dir[WSISA_PATH_MAX];
  int best = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *controllers = strchr(line, ':'), *rel = controllers ? strchr(controllers + 1, ':') : NULL;
    if (!rel) continue;
    *rel++ = '\0';
    controllers++;
    int v2 = controllers[0] == '\0';
    const char *roots_v1[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
    const char *roots_v2[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    int has_cpu = 0;
    for (char *c = controllers, *end; !v2 && c && *c; c = end ? end + 1 : NULL) {
      end = strchr(c, ',');
      if ((end ? (size_t)(end - c) : strlen(c)) == 3 && strncmp(c, "cpu", 3) == 0) has_cpu = 1;
    }
    if (!v2 && !has_cpu) continue;
    for (int r = 0; r < 2; r++) {
      if (wsisa_path_fmt(dir, "%s%s", v2 ? roots_v2[r] : roots_v1[r], rel)) continue;
      for (;;) {
        int q = quota_cpus(dir, v2);
        if (q > 0 && (!best || q < best)) best = q;
        char *slash = strrchr(dir, '/');
        size_t root_len = strlen(v2 ? roots_v2[r] : roots_v1[r]);
        if (!slash || (size_t)(slash - dir) < root_len) break;
        *slash = '\0';
      }
    }
  }
  if (f) fclose(f);
  return best;
}

void wsisa_machine_cores_read(wsisa_machine_cores *c) {
  memset(c, 0, sizeof *c);
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0) {
    /* every core of the machine, also those this process may not use */
    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_topology_load(topo) == 0 && bound) {
      int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
      int have_binding = hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_THREAD) == 0;
      for (int i = 0; i < n; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
        c->machine++;
        if (!have_binding || hwloc_bitmap_intersects(core->cpuset, bound)) c->affinity++;
      }
    }
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
  }
  if (!c->machine) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->machine = c->affinity = n > 0 ? (int)n : 1;
  }
  c->cgroup = cgroup_cpus();
  c->offered = c->machine;
  c->limit = "machine";
  if (c->affinity > 0 && c->affinity < c->offered) {
    c->offered = c->affinity;
    c->limit = "affinity mask";
  }
  if (c->cgroup > 0 && c->cgroup < c->offered) {
    c->offered = c->cgroup;
    c->limit = "cgroup cpu.max";
  }
}

void wsisa_machine_pus_read(wsisa_machine_pus *p) {
  memset(p, 0, sizeof *p);
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo)) return;
  /* StarPU's view: default flags, only the allowed PUs */
  hwloc_bitmap_t mask = hwloc_bitmap_alloc();
  if (mask && hwloc_topology_load(topo) == 0) {
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    p->pus = n < WSISA_MACHINE_MAX_PUS ? n : WSISA_MACHINE_MAX_PUS;
    for (int i = 0; i < p->pus; i++)
      p->os[i] = (int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i)->os_index;
    p->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int have_mask = hwloc_get_cpubind(topo, mask, HWLOC_CPUBIND_THREAD) == 0;
    for (int c = 0; have_mask && c < p->cores && p->nmask < WSISA_MACHINE_MAX_PUS; c++) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
      hwloc_obj_t pu = NULL;
      while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU,
                                                            pu)) != NULL)
        if (hwloc_bitmap_isset(mask, pu->os_index)) {
          p->mask[p->nmask++] = pu->logical_index;
          break;
        }
    }
  }
  hwloc_bitmap_free(mask);
  hwloc_topology_destroy(topo);
}
