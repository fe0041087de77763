// SPDX-License-Identifier: GPL-2.0-only
/*
 * xcall_ipi.c - the xcall project's in-kernel IPI benchmarks.
 *
 * Two benchmarks, chosen by the "mode" parameter, each run once from
 * module_init (insmod returns when it is done):
 *
 *  mode=ipi    the ipi_benchmark table: dry-run, self, normal, broadcast and
 *              broadcast-lock, "iterations" calls each, from one bound kthread.
 *              For every case it records the per-call send-to-completion time
 *              and, for self and normal, the delivery time (send to the start
 *              of the handler on the target), plus the two column sums the
 *              original printed (delivery and total).  Two extra cases:
 *              self-irqwork sends a real self-IPI through irq_work, and
 *              normal-busy interrupts a target kept busy by a spinning kthread.
 *
 *  mode=storm  ipistorm: one kthread bound to each CPU of "cpulist" sends
 *              "numipi" calls, either smp_call_function_single() to the
 *              online CPU "offset" places after it, wrapping (single=1), or
 *              smp_call_function_many() to every other online CPU (single=0),
 *              waiting or not ("wait"), with "delay" microseconds between
 *              calls.  It records the runtime (first start to last finish)
 *              and per-call percentiles.
 *
 * Results: one JSON document in the xcall results format (schema_version 1,
 * docs/results-format.md), readable at /proc/xcall_ipi until rmmod, and a
 * summary through pr_info.  Percentiles come from a log-bucket histogram with
 * 128 buckets per power of two (relative error below 0.4%), the same scheme
 * as xcall-bench.
 *
 * Every parameter is checked before anything runs: a bad value makes insmod
 * fail with -EINVAL and a message naming it.  CPU hotplug is held off
 * (cpus_read_lock) while the benchmark runs, so the CPUs validated stay online.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/time.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/bitops.h>
#include <linux/cpuidle.h>
#include <linux/irq_work.h>
#include <linux/version.h>
#ifdef CONFIG_X86
#include <asm/hardirq.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>
#endif

#define XC_TOOL_VERSION "0.1"
#define XC_MAX_COUNT 1000000000UL	/* iterations / numipi upper bound */
#define XC_MAX_DELAY_US 1000000U
#define XC_MAX_TIMEOUT_S 3600U

/* ---------------------------------------------------------------- params */

static char *mode = "ipi";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "Benchmark: ipi (the ipi_benchmark table) or storm (ipistorm). Default ipi");

static unsigned long iterations = 100000;
module_param(iterations, ulong, 0444);
MODULE_PARM_DESC(iterations, "ipi mode: calls per case (default 100000)");

static char *cases;
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "ipi mode: comma list of cases to run (dry-run,self,normal,broadcast,broadcast-lock, and self-irqwork,normal-busy; default the first five)");

static int cpu = -1;
module_param(cpu, int, 0444);
MODULE_PARM_DESC(cpu, "ipi mode: CPU that sends (default -1: the first online CPU)");

static int target = -1;
module_param(target, int, 0444);
MODULE_PARM_DESC(target, "ipi mode: target of the normal case (default -1: any online CPU but the sender)");

static unsigned long numipi = 100000;
module_param(numipi, ulong, 0444);
MODULE_PARM_DESC(numipi, "storm mode: calls sent by each CPU of cpulist (default 100000)");

static bool single = true;
module_param(single, bool, 0444);
MODULE_PARM_DESC(single, "storm mode: 1 = smp_call_function_single to sender+offset, 0 = smp_call_function_many to all other online CPUs (default 1)");

static unsigned int offset = 1;
module_param(offset, uint, 0444);
MODULE_PARM_DESC(offset, "storm mode, single=1: the target is the online CPU offset places after the sender, wrapping (default 1)");

static char *cpulist;
module_param(cpulist, charp, 0444);
MODULE_PARM_DESC(cpulist, "storm mode: CPUs that send, e.g. 0-3,8 (default: every online CPU)");

static bool wait = true;
module_param(wait, bool, 0444);
MODULE_PARM_DESC(wait, "storm mode: wait for each call to complete (default 1)");

static unsigned int delay;
module_param(delay, uint, 0444);
MODULE_PARM_DESC(delay, "storm mode: microseconds to busy-wait between two calls of a sender (default 0)");

static unsigned int timeout = 120;
module_param(timeout, uint, 0444);
MODULE_PARM_DESC(timeout, "Seconds after which a sender stops early; its records say truncated (default 120)");

/* ------------------------------------------------------------- histogram */

#define XH_SUB_BITS 7
#define XH_SUB (1U << XH_SUB_BITS)
#define XH_BUCKETS (XH_SUB + (64 - XH_SUB_BITS) * XH_SUB)

/* The standard deviation needs a 128-bit sum of squares; without it, it is left out. */
#ifdef CONFIG_ARCH_SUPPORTS_INT128
#define XH_STDDEV 1
typedef unsigned __int128 xc_u128;	/* older kernels have no u128 */
#endif

struct xhist {
	u64 n, sum, min, max;
#ifdef XH_STDDEV
	xc_u128 sumsq;
#endif
	u32 *b;		/* XH_BUCKETS counters */
};

struct xstats {
	u64 n, sum, min, max, p50, p90, p99;
	u64 mean_x10;	/* mean in tenths of the unit */
	u64 stddev;
	bool has_stddev;
};

static int xhist_init(struct xhist *h)
{
	memset(h, 0, sizeof(*h));
	h->b = kvcalloc(XH_BUCKETS, sizeof(u32), GFP_KERNEL);
	if (!h->b)
		return -ENOMEM;
	h->min = U64_MAX;
	return 0;
}

static void xhist_free(struct xhist *h)
{
	kvfree(h->b);
	h->b = NULL;
}

static void xhist_reset(struct xhist *h)
{
	memset(h->b, 0, XH_BUCKETS * sizeof(u32));
	h->n = h->sum = h->max = 0;
#ifdef XH_STDDEV
	h->sumsq = 0;
#endif
	h->min = U64_MAX;
}

static unsigned int xhist_index(u64 v)
{
	unsigned int e;

	if (v < XH_SUB)
		return v;
	e = fls64(v) - (XH_SUB_BITS + 1);
	return (e << XH_SUB_BITS) + (unsigned int)(v >> e);
}

/* Midpoint of bucket idx: exact below XH_SUB, within 1/256 above. */
static u64 xhist_mid(unsigned int idx)
{
	unsigned int e;
	u64 m;

	if (idx < XH_SUB)
		return idx;
	e = (idx >> XH_SUB_BITS) - 1;
	m = XH_SUB + (idx & (XH_SUB - 1));
	return (m << e) + ((1ULL << e) >> 1);
}

static inline void xhist_add(struct xhist *h, u64 v)
{
	h->b[xhist_index(v)]++;
	h->n++;
	h->sum += v;
#ifdef XH_STDDEV
	h->sumsq += (xc_u128)v * v;
#endif
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

static void xhist_merge(struct xhist *dst, const struct xhist *src)
{
	unsigned int i;

	for (i = 0; i < XH_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->n += src->n;
	dst->sum += src->sum;
#ifdef XH_STDDEV
	dst->sumsq += src->sumsq;
#endif
	dst->min = min(dst->min, src->min);
	dst->max = max(dst->max, src->max);
}

/* Value of rank ceil(permille * n / 1000), clamped to [min, max]. */
static u64 xhist_quantile(const struct xhist *h, unsigned int permille)
{
	u64 rank, seen = 0, v;
	unsigned int i;

	if (!h->n)
		return 0;
	rank = div_u64(h->n * permille + 999, 1000);
	if (!rank)
		rank = 1;
	for (i = 0; i < XH_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			break;
	}
	v = xhist_mid(min_t(unsigned int, i, XH_BUCKETS - 1));
	return clamp(v, h->min, h->max);
}

#ifdef XH_STDDEV
/* a / b for a 128-bit a, by shift and subtract (runs a few times per record). */
static xc_u128 xc_div128(xc_u128 a, u64 b)
{
	xc_u128 q = 0, r = 0;
	int i;

	if (!(a >> 64))
		return div64_u64((u64)a, b);
	for (i = 127; i >= 0; i--) {
		r = (r << 1) | ((a >> i) & 1);
		if (r >= b) {
			r -= b;
			q |= (xc_u128)1 << i;
		}
	}
	return q;
}
#endif

static void xhist_stats(const struct xhist *h, struct xstats *s)
{
	memset(s, 0, sizeof(*s));
	if (!h->n)
		return;
	s->n = h->n;
	s->sum = h->sum;
	s->min = h->min;
	s->max = h->max;
	s->mean_x10 = div64_u64(h->sum * 10 + h->n / 2, h->n);
	s->p50 = xhist_quantile(h, 500);
	s->p90 = xhist_quantile(h, 900);
	s->p99 = xhist_quantile(h, 990);
#ifdef XH_STDDEV
	{
		/* population variance: (sumsq - sum^2 / n) / n, all in 128 bits */
		xc_u128 sq = (xc_u128)h->sum * h->sum;
		xc_u128 var = h->sumsq;
		xc_u128 mean_sq = 0;
		u64 n = h->n;

		/* 128-by-64 division by hand: the kernel has no generic __udivti3 */
		mean_sq = xc_div128(sq, n);
		var = var > mean_sq ? var - mean_sq : 0;
		var = xc_div128(var, n);
		s->stddev = int_sqrt64(var > U64_MAX ? U64_MAX : (u64)var);
		s->has_stddev = true;
	}
#endif
}

/* ----------------------------------------------------------- JSON output */

struct jbuf {
	char *p;
	size_t len, cap;
	bool overflow;
};

static __printf(2, 3) void jb_printf(struct jbuf *jb, const char *fmt, ...)
{
	va_list ap;
	size_t room = jb->cap - jb->len;
	int n;

	if (jb->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(jb->p + jb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room) {
		jb->overflow = true;
		jb->p[jb->len] = '\0';
		return;
	}
	jb->len += n;
}

/* The inside of a JSON string: quotes, backslashes, control and non-ASCII bytes escaped. */
static void jb_strbody(struct jbuf *jb, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			jb_printf(jb, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			jb_printf(jb, "\\u%04x", c);
		else
			jb_printf(jb, "%c", c);
	}
}

/* A JSON string literal. */
static void jb_str(struct jbuf *jb, const char *s)
{
	jb_printf(jb, "\"");
	jb_strbody(jb, s);
	jb_printf(jb, "\"");
}

/*
 * The hypervisor, named as xcall-bench names it: from the signature of CPUID leaf
 * 0x40000000 (so that TCG, which the kernel does not detect, is named too).
 */
static const char *xc_hypervisor(bool *virt)
{
#ifdef CONFIG_X86
	static const struct { const char *sig, *name; } known[] = {
		{ "KVMKVMKVM", "KVM" }, { "Microsoft Hv", "Hyper-V" },
		{ "VMwareVMware", "VMware" }, { "XenVMMXenVMM", "Xen" },
		{ "TCGTCGTCGTCG", "QEMU-TCG" }, { "bhyve bhyve ", "bhyve" },
		{ "ACRNACRNACRN", "ACRN" }, { " lrpepyh  vr", "Parallels" },
		{ "VBoxVBoxVBox", "VirtualBox" },
	};
	unsigned int eax, sig[3];
	char name[13];
	int i;

	*virt = boot_cpu_has(X86_FEATURE_HYPERVISOR);
	if (!*virt)
		return "none";
	cpuid(0x40000000, &eax, &sig[0], &sig[1], &sig[2]);
	memcpy(name, sig, 12);
	name[12] = '\0';
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (!strncmp(name, known[i].sig, strlen(known[i].sig)))
			return known[i].name;
	return "unknown";
#else
	*virt = false;
	return "unknown";
#endif
}

static void jb_host(struct jbuf *jb)
{
	struct cpuidle_driver *drv;
	const char *model = "unknown";
	bool virt, tsc_inv = false;
	const char *hyp = xc_hypervisor(&virt);

#ifdef CONFIG_X86
	if (boot_cpu_data.x86_model_id[0])
		model = boot_cpu_data.x86_model_id;
	tsc_inv = boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
		  boot_cpu_has(X86_FEATURE_NONSTOP_TSC);
#endif
	drv = cpuidle_get_driver();

	jb_printf(jb, "  \"host\": {\n    \"hostname\": ");
	jb_str(jb, utsname()->nodename);
	jb_printf(jb, ",\n    \"cpu_model\": ");
	jb_str(jb, skip_spaces(model));
	jb_printf(jb, ",\n    \"cpus_online\": %u,\n    \"kernel\": ", num_online_cpus());
	jb_str(jb, utsname()->release);
	jb_printf(jb, ",\n    \"virtualised\": %s,\n    \"hypervisor\": ", virt ? "true" : "false");
	jb_str(jb, hyp);
	jb_printf(jb, ",\n    \"idle_driver\": ");
	jb_str(jb, drv && drv->name ? drv->name : "none");
	jb_printf(jb, ",\n    \"tsc_invariant\": %s\n  },\n", tsc_inv ? "true" : "false");
}

/* Whole-document header: everything before the results list. */
static void jb_header(struct jbuf *jb)
{
	struct tm tm;

	time64_to_tm(ktime_get_real_seconds(), 0, &tm);
	jb_printf(jb, "{\n  \"schema_version\": 1,\n  \"tool\": \"xcall_ipi.ko\",\n"
		  "  \"tool_version\": \"" XC_TOOL_VERSION "\",\n");
	jb_printf(jb, "  \"created\": \"%04ld-%02d-%02dT%02d:%02d:%02dZ\",\n",
		  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		  tm.tm_hour, tm.tm_min, tm.tm_sec);
	jb_printf(jb, "  \"command\": [\"insmod\", \"xcall_ipi.ko\", ");
	if (!strcmp(mode, "storm")) {
		jb_printf(jb, "\"mode=storm\", \"numipi=%lu\", \"single=%d\", \"offset=%u\", ",
			  numipi, single, offset);
		jb_printf(jb, "\"cpulist=");
		jb_strbody(jb, cpulist);
		jb_printf(jb, "\", \"wait=%d\", \"delay=%u\", \"timeout=%u\"],\n",
			  wait, delay, timeout);
	} else {
		jb_printf(jb, "\"mode=ipi\", \"iterations=%lu\", \"cpu=%d\", \"target=%d\", \"cases=",
			  iterations, cpu, target);
		jb_strbody(jb, cases);
		jb_printf(jb, "\", \"timeout=%u\"],\n", timeout);
	}
	jb_host(jb);
	jb_printf(jb, "  \"results\": [");
}

struct jrec {
	const char *bench, *case_name, *unit, *better;
	const struct xstats *st;
	const int *cpus;
	unsigned int ncpus;
	const char *params;	/* preformatted JSON object body, may be NULL */
	const char *counters;	/* preformatted JSON object body, may be NULL */
};

static void jb_record(struct jbuf *jb, bool *first, const struct jrec *r)
{
	const struct xstats *s = r->st;
	unsigned int i;

	jb_printf(jb, "%s\n    {\"bench\": ", *first ? "" : ",");
	*first = false;
	jb_str(jb, r->bench);
	jb_printf(jb, ", \"case\": ");
	jb_str(jb, r->case_name);
	jb_printf(jb, ", \"unit\": \"%s\", \"n\": %llu, \"mean\": %llu.%llu, "
		  "\"p50\": %llu, \"p90\": %llu, \"p99\": %llu, \"max\": %llu, \"min\": %llu, "
		  "\"repeat\": 0",
		  r->unit, s->n, s->mean_x10 / 10, s->mean_x10 % 10,
		  s->p50, s->p90, s->p99, s->max, s->min);
	if (s->has_stddev)
		jb_printf(jb, ", \"stddev\": %llu", s->stddev);
	if (r->ncpus) {
		jb_printf(jb, ", \"cpus\": [");
		for (i = 0; i < r->ncpus; i++)
			jb_printf(jb, "%s%d", i ? ", " : "", r->cpus[i]);
		jb_printf(jb, "]");
	}
	if (r->params)
		jb_printf(jb, ", \"params\": {%s}", r->params);
	if (r->counters)
		jb_printf(jb, ", \"counters\": {%s}", r->counters);
	jb_printf(jb, ", \"better\": \"%s\"}", r->better);
}

static void jb_footer(struct jbuf *jb)
{
	jb_printf(jb, "\n  ]\n}\n");
}

/* A single-number record: n = 1 and every statistic that number. */
static void xstats_single(struct xstats *s, u64 v)
{
	memset(s, 0, sizeof(*s));
	s->n = 1;
	s->sum = s->min = s->max = s->p50 = s->p90 = s->p99 = v;
	s->mean_x10 = v * 10;
	s->stddev = 0;
	s->has_stddev = false;
}

/* ------------------------------------------------------------ /proc file */

static char *xc_result;
static size_t xc_result_len;
static struct proc_dir_entry *xc_proc;

static ssize_t xc_proc_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	return simple_read_from_buffer(buf, len, pos, xc_result, xc_result_len);
}

static const struct proc_ops xc_proc_ops = {
	.proc_read = xc_proc_read,
	.proc_lseek = default_llseek,
};

/* ------------------------------------------------------------- counters */

/* Function-call IPIs received, summed over online CPUs ("CAL" in /proc/interrupts). */
static u64 xc_cal_count(void)
{
	u64 sum = 0;
#if defined(CONFIG_X86) && defined(CONFIG_SMP)
	int c;

	for_each_online_cpu(c)
		sum += per_cpu(irq_stat, c).irq_call_count;
#endif
	return sum;
}

/* irq_work self-IPIs received, summed over online CPUs ("IWI"). */
static u64 xc_iwi_count(void)
{
	u64 sum = 0;
#if defined(CONFIG_X86) && defined(CONFIG_X86_LOCAL_APIC)
	int c;

	for_each_online_cpu(c)
		sum += per_cpu(irq_stat, c).apic_irq_work_irqs;
#endif
	return sum;
}

static bool xc_timed_out(u64 deadline)
{
	return timeout && ktime_get_ns() > deadline;
}

/* ---------------------------------------------------------- mode=ipi */

/*
 * The seed's five cases run by default. Two more are asked for by name:
 *  - self-irqwork: the seed's "self" never interrupts anything (smp_call_function_single()
 *    to the calling CPU runs the function in place, with interrupts off), while
 *    irq_work_queue() raises a real self-IPI on x86 (IRQ_WORK_VECTOR, "IWI").
 *  - normal-busy: normal, with a kthread spinning on the target so that the IPI interrupts
 *    a running CPU instead of waking an idle one (as xcall-bench's user-space probe does).
 */
enum ipi_case {
	IPI_DRY, IPI_SELF, IPI_NORMAL, IPI_BCAST, IPI_BCAST_LOCK, IPI_SELF_IW, IPI_NORMAL_BUSY,
	IPI_NCASES
};
#define IPI_DEFAULT_CASES (BIT(IPI_SELF_IW) - 1)
#define IPI_CASE_LIST "dry-run,self,normal,broadcast,broadcast-lock,self-irqwork,normal-busy"

static const char *const ipi_case_names[IPI_NCASES] = {
	"dry-run", "self", "normal", "broadcast", "broadcast-lock", "self-irqwork", "normal-busy",
};

static bool ipi_has_delivery(enum ipi_case c)
{
	return c == IPI_SELF || c == IPI_NORMAL || c == IPI_SELF_IW || c == IPI_NORMAL_BUSY;
}

/* Keeps a CPU busy (never idle) until kthread_stop(). */
static int ipi_spinner(void *arg)
{
	int *running = arg;

	smp_store_release(running, 1);
	while (!kthread_should_stop()) {
		cpu_relax();
		cond_resched();
	}
	return 0;
}

struct ipi_result {
	bool ran, truncated;
	int target;			/* -1: broadcast / none */
	u64 done, total_ns, delivery_sum_ns, cal_delta, iwi_delta, ipis_expected;
	struct xstats call, delivery;
};

struct ipi_ctx {
	int sender, normal_target;
	unsigned int mask;		/* bit per enum ipi_case */
	struct xhist call, delivery;
	struct ipi_result res[IPI_NCASES];
	struct completion done;
};

/* The handler of self and normal: turns the send time into the delivery time. */
static void ipi_handle_time(void *info)
{
	ktime_t *t = info;

	*t = ktime_sub(ktime_get(), *t);
}

static void ipi_handle_nop(void *info)
{
}

struct ipi_iw {
	struct irq_work work;
	ktime_t t;
	int done;
};

/* Runs in the self-IPI's interrupt on the sending CPU. */
static void ipi_handle_irqwork(struct irq_work *w)
{
	struct ipi_iw *iw = container_of(w, struct ipi_iw, work);

	iw->t = ktime_sub(ktime_get(), iw->t);
	smp_store_release(&iw->done, 1);	/* pairs with the sender's acquire */
}

static void ipi_handle_lock(void *info)
{
	spinlock_t *lock = info;

	spin_lock(lock);
	spin_unlock(lock);
}

static void ipi_run_case(struct ipi_ctx *ctx, enum ipi_case c)
{
	struct ipi_result *r = &ctx->res[c];
	DEFINE_SPINLOCK(lock);
	struct ipi_iw iw;
	struct task_struct *spinner = NULL;
	int spinning = 0;
	u64 deadline;
	u64 cal0, iwi0, i, t0, t1, start;
	ktime_t t;
	int dest = -1;

	init_irq_work(&iw.work, ipi_handle_irqwork);
	if (c == IPI_SELF || c == IPI_SELF_IW)
		dest = ctx->sender;
	else if (c == IPI_NORMAL || c == IPI_NORMAL_BUSY)
		dest = ctx->normal_target;
	r->target = dest;

	if (c == IPI_NORMAL_BUSY) {
		spinner = kthread_create(ipi_spinner, &spinning, "xcall_spin/%d", dest);
		if (IS_ERR(spinner)) {
			pr_warn("normal-busy: no spinner thread (%ld), case skipped\n",
				PTR_ERR(spinner));
			return;
		}
		kthread_bind(spinner, dest);
		wake_up_process(spinner);
		while (!smp_load_acquire(&spinning))
			schedule_timeout_uninterruptible(1);
	}
	deadline = ktime_get_ns() + (u64)timeout * NSEC_PER_SEC;

	xhist_reset(&ctx->call);
	xhist_reset(&ctx->delivery);
	cal0 = xc_cal_count();
	iwi0 = xc_iwi_count();
	start = ktime_get_ns();
	for (i = 0; i < iterations; i++) {
		t0 = ktime_get_ns();
		switch (c) {
		case IPI_DRY:
			/* everything but the call itself */
			t = ktime_get();
			get_cpu();
			put_cpu();
			t = 0;
			break;
		case IPI_SELF:
		case IPI_NORMAL:
		case IPI_NORMAL_BUSY:
			t = ktime_get();
			smp_call_function_single(dest, ipi_handle_time, &t, 1);
			break;
		case IPI_BCAST:
			preempt_disable();
			smp_call_function_many(cpu_online_mask, ipi_handle_nop, NULL, 1);
			preempt_enable();
			t = 0;
			break;
		case IPI_BCAST_LOCK:
			preempt_disable();
			smp_call_function_many(cpu_online_mask, ipi_handle_lock, &lock, 1);
			preempt_enable();
			t = 0;
			break;
		case IPI_SELF_IW:
			/* Bound to this CPU, so the work runs here; wait for it. */
			iw.done = 0;
			iw.t = ktime_get();
			irq_work_queue(&iw.work);
			while (!smp_load_acquire(&iw.done))
				cpu_relax();
			irq_work_sync(&iw.work);
			t = iw.t;
			break;
		default:
			t = 0;
			break;
		}
		t1 = ktime_get_ns();
		xhist_add(&ctx->call, t1 - t0);
		if (ipi_has_delivery(c))
			xhist_add(&ctx->delivery, (u64)max_t(s64, ktime_to_ns(t), 0));
		r->delivery_sum_ns += (u64)max_t(s64, ktime_to_ns(t), 0);
		cond_resched();
		if (!(i & 1023) && xc_timed_out(deadline)) {
			r->truncated = true;
			i++;
			break;
		}
	}
	r->total_ns = ktime_get_ns() - start;
	r->cal_delta = xc_cal_count() - cal0;
	r->iwi_delta = xc_iwi_count() - iwi0;
	if (spinner)
		kthread_stop(spinner);
	r->done = i;
	if (c == IPI_NORMAL || c == IPI_NORMAL_BUSY || c == IPI_SELF_IW)
		r->ipis_expected = i;
	else if (c == IPI_BCAST || c == IPI_BCAST_LOCK)
		r->ipis_expected = i * (num_online_cpus() - 1);
	xhist_stats(&ctx->call, &r->call);
	xhist_stats(&ctx->delivery, &r->delivery);
	r->ran = true;
}

static int ipi_thread(void *arg)
{
	struct ipi_ctx *ctx = arg;
	int c;

	for (c = 0; c < IPI_NCASES; c++)
		if (ctx->mask & BIT(c))
			ipi_run_case(ctx, c);
	complete(&ctx->done);
	/* Stay until kthread_stop(), so the task cannot vanish under it. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int ipi_parse_cases(unsigned int *mask)
{
	char *copy, *s, *tok;
	int c;

	*mask = 0;
	if (!cases || !*cases) {
		*mask = IPI_DEFAULT_CASES;
		return 0;
	}
	copy = kstrdup(cases, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	s = copy;
	while ((tok = strsep(&s, ",")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		for (c = 0; c < IPI_NCASES; c++)
			if (!strcmp(tok, ipi_case_names[c]))
				break;
		if (c == IPI_NCASES) {
			pr_err("cases: unknown case '%s' (known: " IPI_CASE_LIST ")\n",
			       tok);
			kfree(copy);
			return -EINVAL;
		}
		*mask |= BIT(c);
	}
	kfree(copy);
	if (!*mask) {
		pr_err("cases: no case named\n");
		return -EINVAL;
	}
	return 0;
}

static void ipi_report(struct ipi_ctx *ctx, struct jbuf *jb)
{
	char params[320], counters[320];
	bool first = true;
	int c, cpus[2];

	jb_header(jb);
	for (c = 0; c < IPI_NCASES; c++) {
		struct ipi_result *r = &ctx->res[c];
		struct jrec rec = {
			.bench = "kmod-ipi", .unit = "ns", .better = "lower",
			.params = params, .counters = counters, .cpus = cpus,
		};
		char name[40];

		if (!r->ran)
			continue;
		cpus[0] = ctx->sender;
		rec.ncpus = 1;
		if (r->target >= 0 && r->target != ctx->sender)
			cpus[rec.ncpus++] = r->target;
		scnprintf(params, sizeof(params),
			  "\"iterations\": %lu, \"sender\": %d, \"target\": %d, \"truncated\": %s, "
			  "\"timed\": \"send to completion, per call\"",
			  iterations, ctx->sender, r->target, r->truncated ? "true" : "false");
		scnprintf(counters, sizeof(counters),
			  "\"calls\": %llu, \"total_ns\": %llu, \"delivery_sum_ns\": %llu, "
			  "\"ipis_expected\": %llu, \"cal_irqs\": %llu, \"iwi_irqs\": %llu",
			  r->done, r->total_ns, r->delivery_sum_ns, r->ipis_expected, r->cal_delta,
			  r->iwi_delta);
		rec.case_name = ipi_case_names[c];
		rec.st = &r->call;
		jb_record(jb, &first, &rec);

		if (ipi_has_delivery(c)) {
			scnprintf(name, sizeof(name), "%s.delivery", ipi_case_names[c]);
			scnprintf(params, sizeof(params),
				  "\"iterations\": %lu, \"sender\": %d, \"target\": %d, \"truncated\": %s, "
				  "\"timed\": \"send to handler start, per call\"",
				  iterations, ctx->sender, r->target, r->truncated ? "true" : "false");
			rec.case_name = name;
			rec.st = &r->delivery;
			rec.counters = NULL;
			jb_record(jb, &first, &rec);
			rec.counters = counters;
		}

		pr_info("%-15s %18llu, %18llu ns  (%llu calls; per call p50 %llu p99 %llu max %llu ns; CAL +%llu IWI +%llu)\n",
			ipi_case_names[c], r->delivery_sum_ns, r->total_ns, r->done,
			r->call.p50, r->call.p99, r->call.max, r->cal_delta, r->iwi_delta);
	}
	jb_footer(jb);
}

static int run_ipi(struct jbuf *jb)
{
	struct ipi_ctx *ctx;
	struct task_struct *task;
	int ret;

	if (iterations == 0 || iterations > XC_MAX_COUNT) {
		pr_err("iterations=%lu: must be between 1 and %lu\n", iterations, XC_MAX_COUNT);
		return -EINVAL;
	}
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ret = ipi_parse_cases(&ctx->mask);
	if (ret)
		goto out_free;

	if (cpu == -1) {
		ctx->sender = cpumask_first(cpu_online_mask);
	} else if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		pr_err("cpu=%d: not an online CPU\n", cpu);
		ret = -EINVAL;
		goto out_free;
	} else {
		ctx->sender = cpu;
	}

	if (target == -1) {
		ctx->normal_target = cpumask_any_but(cpu_online_mask, ctx->sender);
		if (ctx->normal_target >= nr_cpu_ids) {
			if (ctx->mask & (BIT(IPI_NORMAL) | BIT(IPI_NORMAL_BUSY)))
				pr_warn("normal: only one CPU online, case skipped\n");
			ctx->mask &= ~(BIT(IPI_NORMAL) | BIT(IPI_NORMAL_BUSY));
			ctx->normal_target = -1;
		}
	} else if (target < 0 || target >= nr_cpu_ids || !cpu_online(target)) {
		pr_err("target=%d: not an online CPU\n", target);
		ret = -EINVAL;
		goto out_free;
	} else if (target == ctx->sender) {
		pr_err("target=%d: is the sender; use the self case for that\n", target);
		ret = -EINVAL;
		goto out_free;
	} else {
		ctx->normal_target = target;
	}
	if (!ctx->mask) {
		pr_err("no case left to run\n");
		ret = -EINVAL;
		goto out_free;
	}

	ret = xhist_init(&ctx->call);
	if (ret)
		goto out_free;
	ret = xhist_init(&ctx->delivery);
	if (ret)
		goto out_hist;
	init_completion(&ctx->done);

	task = kthread_create(ipi_thread, ctx, "xcall_ipi/%d", ctx->sender);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto out_hist2;
	}
	kthread_bind(task, ctx->sender);
	pr_info("ipi: %lu calls per case from CPU %d, normal target %d, %u CPUs online\n",
		iterations, ctx->sender, ctx->normal_target, num_online_cpus());
	wake_up_process(task);
	wait_for_completion(&ctx->done);
	kthread_stop(task);

	ipi_report(ctx, jb);
	ret = 0;
out_hist2:
	xhist_free(&ctx->delivery);
out_hist:
	xhist_free(&ctx->call);
out_free:
	kfree(ctx);
	return ret;
}

/* ---------------------------------------------------------- mode=storm */

struct storm_sender {
	int cpu, dest;			/* dest -1: every other online CPU */
	struct task_struct *task;
	struct xhist hist;
	u64 start_ns, end_ns, calls;
	bool truncated;
	struct completion done;
	struct storm_ctx *ctx;
};

struct storm_ctx {
	unsigned int nsend;
	struct storm_sender *s;
	struct completion go;
	atomic_t ready;
};

/* Handler runs, counted per CPU so that targets share no cache line. */
static DEFINE_PER_CPU(unsigned long, storm_handled);

static void storm_handle(void *info)
{
	this_cpu_inc(storm_handled);
}

static u64 storm_handled_sum(void)
{
	u64 sum = 0;
	int c;

	for_each_possible_cpu(c)
		sum += per_cpu(storm_handled, c);
	return sum;
}

static int storm_thread(void *arg)
{
	struct storm_sender *s = arg;
	struct storm_ctx *ctx = s->ctx;
	u64 deadline, i, t0, t1;

	atomic_inc(&ctx->ready);
	wait_for_completion(&ctx->go);

	s->start_ns = ktime_get_ns();
	deadline = s->start_ns + (u64)timeout * NSEC_PER_SEC;
	for (i = 0; i < numipi; i++) {
		t0 = ktime_get_ns();
		if (s->dest >= 0) {
			smp_call_function_single(s->dest, storm_handle, ctx, wait);
		} else {
			preempt_disable();
			smp_call_function_many(cpu_online_mask, storm_handle, ctx, wait);
			preempt_enable();
		}
		t1 = ktime_get_ns();
		xhist_add(&s->hist, t1 - t0);
		if (delay) {
			/* udelay() overflows on long delays: whole ms through mdelay() */
			if (delay >= 1000)
				mdelay(delay / 1000);
			udelay(delay % 1000);
		}
		cond_resched();
		if (!(i & 1023) && xc_timed_out(deadline)) {
			s->truncated = true;
			i++;
			break;
		}
	}
	s->end_ns = ktime_get_ns();
	s->calls = i;
	complete(&s->done);

	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* The online CPU "offset" places after cpu c, wrapping around the online mask. */
static int storm_dest(int c)
{
	unsigned int steps = offset % num_online_cpus();
	int d = c;

	while (steps--) {
		d = cpumask_next(d, cpu_online_mask);
		if (d >= nr_cpu_ids)
			d = cpumask_first(cpu_online_mask);
	}
	return d;
}

static int storm_parse_cpulist(struct cpumask *mask)
{
	int ret, c;

	if (!cpulist || !*cpulist) {
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	/* Only digits, commas, dashes (and cpulist_parse's ':' strides). */
	if (strspn(cpulist, "0123456789,-:/") != strlen(cpulist)) {
		pr_err("cpulist='%s': not a CPU list (e.g. 0-3,8)\n", cpulist);
		return -EINVAL;
	}
	ret = cpulist_parse(cpulist, mask);
	if (ret) {
		pr_err("cpulist='%s': not a CPU list or beyond nr_cpu_ids=%u (%d)\n",
		       cpulist, nr_cpu_ids, ret);
		return -EINVAL;
	}
	if (cpumask_empty(mask)) {
		pr_err("cpulist='%s': names no CPU\n", cpulist);
		return -EINVAL;
	}
	for_each_cpu(c, mask) {
		if (!cpu_online(c)) {
			pr_err("cpulist='%s': CPU %d is not online\n", cpulist, c);
			return -EINVAL;
		}
	}
	return 0;
}

static void storm_report(struct storm_ctx *ctx, struct jbuf *jb, u64 cal_delta,
			 u64 expected_calls, u64 ipis_expected)
{
	struct xhist all = { 0 };
	struct xstats st;
	char params[320], counters[320], name[48];
	const char *kind = single ? (wait ? "single-wait" : "single-nowait")
				  : (wait ? "many-wait" : "many-nowait");
	u64 first = U64_MAX, last = 0, calls = 0;
	bool truncated = false, one_first = true;
	int *cpus;
	unsigned int i;

	cpus = kcalloc(ctx->nsend * 2, sizeof(int), GFP_KERNEL);
	if (xhist_init(&all) || !cpus) {
		jb->overflow = true;
		goto out;
	}
	for (i = 0; i < ctx->nsend; i++) {
		struct storm_sender *s = &ctx->s[i];

		xhist_merge(&all, &s->hist);
		first = min(first, s->start_ns);
		last = max(last, s->end_ns);
		calls += s->calls;
		truncated |= s->truncated;
		cpus[i] = s->cpu;
	}

	jb_header(jb);
	scnprintf(params, sizeof(params),
		  "\"numipi\": %lu, \"single\": %d, \"offset\": %u, \"wait\": %d, \"delay_us\": %u, "
		  "\"senders\": %u, \"truncated\": %s",
		  numipi, single, offset, wait, delay, ctx->nsend, truncated ? "true" : "false");
	scnprintf(counters, sizeof(counters),
		  "\"calls\": %llu, \"handled_expected\": %llu, \"handled\": %lld, "
		  "\"ipis_expected\": %llu, \"cal_irqs\": %llu",
		  calls, expected_calls, (long long)storm_handled_sum(),
		  ipis_expected, cal_delta);

	/* Runtime: from the first sender's start to the last one's end. */
	xstats_single(&st, last - first);
	scnprintf(name, sizeof(name), "%s.runtime", kind);
	jb_record(jb, &one_first, &(struct jrec){
		.bench = "kmod-storm", .case_name = name, .unit = "ns", .better = "lower",
		.st = &st, .cpus = cpus, .ncpus = ctx->nsend,
		.params = params, .counters = counters });

	xhist_stats(&all, &st);
	jb_record(jb, &one_first, &(struct jrec){
		.bench = "kmod-storm", .case_name = kind, .unit = "ns", .better = "lower",
		.st = &st, .cpus = cpus, .ncpus = ctx->nsend,
		.params = params, .counters = counters });
	pr_info("storm %s: %u senders x %lu calls: runtime %llu ns; per call p50 %llu p90 %llu p99 %llu max %llu ns; CAL +%llu (expected ~%llu)\n",
		kind, ctx->nsend, numipi, last - first, st.p50, st.p90, st.p99, st.max,
		cal_delta, ipis_expected);

	for (i = 0; i < ctx->nsend; i++) {
		struct storm_sender *s = &ctx->s[i];
		int pair[2] = { s->cpu, s->dest };

		xhist_stats(&s->hist, &st);
		scnprintf(name, sizeof(name), "%s.cpu%d", kind, s->cpu);
		scnprintf(params, sizeof(params),
			  "\"numipi\": %lu, \"single\": %d, \"offset\": %u, \"wait\": %d, "
			  "\"delay_us\": %u, \"sender\": %d, \"target\": %d, \"truncated\": %s",
			  numipi, single, offset, wait, delay, s->cpu, s->dest,
			  s->truncated ? "true" : "false");
		scnprintf(counters, sizeof(counters), "\"calls\": %llu, \"runtime_ns\": %llu",
			  s->calls, s->end_ns - s->start_ns);
		jb_record(jb, &one_first, &(struct jrec){
			.bench = "kmod-storm", .case_name = name, .unit = "ns", .better = "lower",
			.st = &st, .cpus = pair, .ncpus = s->dest >= 0 ? 2 : 1,
			.params = params, .counters = counters });
	}
	jb_footer(jb);
out:
	xhist_free(&all);
	kfree(cpus);
}

static int run_storm(struct jbuf *jb)
{
	struct storm_ctx *ctx;
	cpumask_var_t senders;
	unsigned int i, n, others = num_online_cpus() - 1;
	u64 cal0, expected_calls, ipis_expected;
	int c, ret;

	if (numipi == 0 || numipi > XC_MAX_COUNT) {
		pr_err("numipi=%lu: must be between 1 and %lu\n", numipi, XC_MAX_COUNT);
		return -EINVAL;
	}
	if (delay > XC_MAX_DELAY_US) {
		pr_err("delay=%u: at most %u microseconds\n", delay, XC_MAX_DELAY_US);
		return -EINVAL;
	}
	if (!single && others == 0) {
		pr_err("single=0: only one CPU online, nobody to send to\n");
		return -EINVAL;
	}
	if (!zalloc_cpumask_var(&senders, GFP_KERNEL))
		return -ENOMEM;
	ret = storm_parse_cpulist(senders);
	if (ret)
		goto out_mask;

	/* A sender that would call itself sends no IPI at all. */
	if (single && offset % num_online_cpus() == 0) {
		pr_err("offset=%u: a multiple of the %u online CPUs, so every sender would call itself (no IPI)\n",
		       offset, num_online_cpus());
		ret = -EINVAL;
		goto out_mask;
	}

	n = cpumask_weight(senders);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		ret = -ENOMEM;
		goto out_mask;
	}
	ctx->s = kcalloc(n, sizeof(*ctx->s), GFP_KERNEL);
	if (!ctx->s) {
		ret = -ENOMEM;
		goto out_ctx;
	}
	init_completion(&ctx->go);
	atomic_set(&ctx->ready, 0);
	for_each_possible_cpu(c)
		per_cpu(storm_handled, c) = 0;

	i = 0;
	for_each_cpu(c, senders) {
		struct storm_sender *s = &ctx->s[i];

		s->ctx = ctx;
		s->cpu = c;
		s->dest = single ? storm_dest(c) : -1;
		init_completion(&s->done);
		ret = xhist_init(&s->hist);
		if (ret)
			goto out_threads;
		s->task = kthread_create(storm_thread, s, "xcall_storm/%d", c);
		if (IS_ERR(s->task)) {
			ret = PTR_ERR(s->task);
			s->task = NULL;
			goto out_threads;
		}
		kthread_bind(s->task, c);
		ctx->nsend = ++i;
	}

	pr_info("storm: %u senders, %lu %s calls each, %s, delay %u us, %u CPUs online\n",
		n, numipi, single ? "single" : "many", wait ? "wait" : "nowait", delay,
		num_online_cpus());
	for (i = 0; i < n; i++)
		wake_up_process(ctx->s[i].task);
	while (atomic_read(&ctx->ready) < n)
		schedule_timeout_uninterruptible(1);
	cal0 = xc_cal_count();
	complete_all(&ctx->go);
	for (i = 0; i < n; i++)
		wait_for_completion(&ctx->s[i].done);

	/* Flush calls still in flight (wait=0) so "handled" is final. */
	if (!wait) {
		for (i = 0; i < n; i++) {
			if (ctx->s[i].dest >= 0)
				smp_call_function_single(ctx->s[i].dest, ipi_handle_nop, NULL, 1);
		}
		if (!single) {
			preempt_disable();
			smp_call_function_many(cpu_online_mask, ipi_handle_nop, NULL, 1);
			preempt_enable();
		}
	}
	expected_calls = 0;
	for (i = 0; i < n; i++)
		expected_calls += ctx->s[i].calls;
	ipis_expected = single ? expected_calls : expected_calls * others;
	expected_calls = ipis_expected;		/* handler runs: one per target */
	storm_report(ctx, jb, xc_cal_count() - cal0, expected_calls, ipis_expected);
	ret = 0;

out_threads:
	for (i = 0; i < ctx->nsend; i++) {
		if (ctx->s[i].task)
			kthread_stop(ctx->s[i].task);
	}
	for (i = 0; i < n; i++)
		xhist_free(&ctx->s[i].hist);
	kfree(ctx->s);
out_ctx:
	kfree(ctx);
out_mask:
	free_cpumask_var(senders);
	return ret;
}

/* ---------------------------------------------------------- module */

static int __init xcall_ipi_init(void)
{
	struct jbuf jb = { 0 };
	int ret;

	if (!mode || (strcmp(mode, "ipi") && strcmp(mode, "storm"))) {
		pr_err("mode='%s': must be ipi or storm\n", mode ? mode : "");
		return -EINVAL;
	}
	if (timeout > XC_MAX_TIMEOUT_S) {
		pr_err("timeout=%u: at most %u seconds\n", timeout, XC_MAX_TIMEOUT_S);
		return -EINVAL;
	}

	jb.cap = 64 * 1024 + (size_t)num_possible_cpus() * 1024;
	jb.p = kvzalloc(jb.cap, GFP_KERNEL);
	if (!jb.p)
		return -ENOMEM;

	cpus_read_lock();
	if (!strcmp(mode, "storm"))
		ret = run_storm(&jb);
	else
		ret = run_ipi(&jb);
	cpus_read_unlock();

	if (!ret && jb.overflow) {
		pr_err("results did not fit in %zu bytes\n", jb.cap);
		ret = -ENOMEM;
	}
	if (ret) {
		kvfree(jb.p);
		return ret;
	}
	xc_result = jb.p;
	xc_result_len = jb.len;
	xc_proc = proc_create("xcall_ipi", 0444, NULL, &xc_proc_ops);
	if (!xc_proc) {
		kvfree(xc_result);
		return -ENOMEM;
	}
	pr_info("results (%zu bytes of JSON) in /proc/xcall_ipi; rmmod xcall_ipi to run again\n",
		xc_result_len);
	return 0;
}

static void __exit xcall_ipi_exit(void)
{
	proc_remove(xc_proc);
	kvfree(xc_result);
}

module_init(xcall_ipi_init);
module_exit(xcall_ipi_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("xcall: in-kernel IPI benchmarks (ipi_benchmark table and ipistorm) with JSON results");
MODULE_VERSION(XC_TOOL_VERSION);
