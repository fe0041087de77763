/*
 * layout: prints the size of every public struct of xcall.h and the offset of
 * each of its fields. Built once as C and once as C++ (each compiler, each
 * standard); tests/api/check.sh requires every output to be the same, so that
 * a C++ program and libxcall agree on what they share.
 */
#include <xcall.h>
#include <stdio.h>

#ifdef __cplusplus
#define ALIGNOF(t) alignof(t)
#else
#define ALIGNOF(t) _Alignof(t)
#endif
#define S(t)     printf("sizeof(%s) %zu align %zu\n", #t, sizeof(t), ALIGNOF(t))
#define F(t, f)  printf("offsetof(%s, %s) %zu size %zu\n", #t, #f, offsetof(t, f), sizeof(((t *)0)->f))
/* struct xc_stats's fields are its counters' list (XC_STATS_COUNTERS): each one */
#define F_STAT(name, counted_by, kind, meaning) F(struct xc_stats, name);

int main(void)
{
	S(struct xc_opts);
	F(struct xc_opts, cpus); F(struct xc_opts, serial_bringup); F(struct xc_opts, poll_ns);
	F(struct xc_opts, cpu_init); F(struct xc_opts, cpu_init_arg); F(struct xc_opts, bringup_timeout_ms);
	F(struct xc_opts, report); F(struct xc_opts, report_ctx); F(struct xc_opts, stuck_ms);
	F(struct xc_opts, trace_file); F(struct xc_opts, trace_events); F(struct xc_opts, urgent_signal);
	F(struct xc_opts, follow_os); F(struct xc_opts, attach); F(struct xc_opts, ring_entries);
	F(struct xc_opts, stack_kb);
	S(struct xc_stats);
	XC_STATS_COUNTERS(F_STAT)
	S(struct xc__link);
	F(struct xc__link, next);
	S(struct xc__completion);
	F(struct xc__completion, word); F(struct xc__completion, waiter);
	S(struct xc_call);
	F(struct xc_call, fn); F(struct xc_call, arg); F(struct xc_call, _link); F(struct xc_call, _flags);
	F(struct xc_call, _src_cpu); F(struct xc_call, _trace_id); F(struct xc_call, _completion);
	F(struct xc_call, _owner); F(struct xc_call, on_done); F(struct xc_call, _done);
	S(struct xc_call_on_done);
	F(struct xc_call_on_done, fn); F(struct xc_call_on_done, arg);
	S(struct xc_work);
	F(struct xc_work, fn); F(struct xc_work, arg); F(struct xc_work, _link); F(struct xc_work, _flags);
	F(struct xc_work, _src_cpu); F(struct xc_work, _trace_id);
	S(cpu_set_t);
	return 0;
}
