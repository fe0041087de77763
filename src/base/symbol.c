// SPDX-License-Identifier: MIT
/*
 * symbol.c - a function's name for stuck reports and traces.
 *
 * dladdr() first: it sees the dynamic symbol table of every loaded object.
 * What it cannot name (any function of a static executable, which has no
 * dynamic symbols; a static function; a program linked without -rdynamic)
 * is looked up in the executable's own ELF symbol table, .symtab (.dynsym
 * if stripped), read once from /proc/self/exe. Without it, an address.
 *
 * Context: stuck reports run in a waiting thread, never in the urgent
 * signal handler (XC_WAIT from an urgent call is -EDEADLK), and trace dumps
 * in xc_exit() or xc_trace_dump(): ordinary threads. So the first lookup may
 * open a file, map and allocate; the lookups after it allocate nothing.
 */
#include "base/internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the table may cost at most; past that, addresses stay numbers. */
#define XC_SYM_MAX_FUNCS (1u << 20)		/* 16 bytes each */
#define XC_SYM_MAX_BYTES ((size_t)256 << 20)	/* a mapped section: file pages */
#define XC_SYM_MAX_PHDRS 64
#define XC_SYM_BACK      8	/* enclosing symbols looked at, for nested ones */

struct xc_sym {
	uintptr_t start;	/* link-time address */
	uint32_t size;
	unsigned name : 30;	/* in the string table (< XC_SYM_MAX_BYTES) */
	unsigned rank : 2;	/* of aliases, the global one names the address */
};

static struct {
	struct xc_sym *syms;	/* by start, one per address */
	size_t nr;
	const char *strtab;	/* stays mapped: only the names looked up are read in */
	uintptr_t bias;		/* load address - link-time address */
} tab;

/* pthread_once: its return orders the table's stores before every reader's loads. */
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static const char *name_off(char *buf, size_t n, const char *name, uintptr_t off)
{
	if (off)
		snprintf(buf, n, "%s+0x%lx", name, (unsigned long)off);
	else
		snprintf(buf, n, "%s", name);
	return buf;
}

static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
	return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* Section @sh of @fd, mapped read-only; NULL if it lies outside the file or is too big. */
static const void *map_section(int fd, const ElfW(Shdr) *sh, uint64_t fsize, void **base,
			       size_t *len)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = sh->sh_offset & ~(pg - 1);
	void *p;

	if (!sh->sh_size || sh->sh_size > XC_SYM_MAX_BYTES || sh->sh_offset > fsize ||
	    sh->sh_size > fsize - sh->sh_offset)
		return NULL;
	*len = (size_t)(sh->sh_offset - start + sh->sh_size);
	p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
	if (p == MAP_FAILED)
		return NULL;
	*base = p;
	return (const char *)p + (sh->sh_offset - start);
}

/*
 * The executable's load bias (0 unless PIE). Its program headers in memory
 * must be the file's, or /proc/self/exe is not the program that runs (one
 * started as "ld.so ./prog" is ld.so there).
 */
static bool load_bias(int fd, const ElfW(Ehdr) *eh, uintptr_t *bias)
{
	const ElfW(Phdr) *mem = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);
	ElfW(Phdr) ph[XC_SYM_MAX_PHDRS];
	uintptr_t at = (uintptr_t)mem;

	if (!mem || n != eh->e_phnum || n > XC_SYM_MAX_PHDRS ||
	    eh->e_phentsize != sizeof(ph[0]) || !read_at(fd, ph, n * sizeof(ph[0]), eh->e_phoff) ||
	    memcmp(ph, mem, n * sizeof(ph[0])))
		return false;
	/* where the headers were linked: PT_PHDR says, else the PT_LOAD that holds them */
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_PHDR) {
			*bias = at - (uintptr_t)ph[i].p_vaddr;
			return true;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && eh->e_phoff >= ph[i].p_offset &&
		    eh->e_phoff - ph[i].p_offset < ph[i].p_filesz) {
			*bias = at - (uintptr_t)(ph[i].p_vaddr + (eh->e_phoff - ph[i].p_offset));
			return true;
		}
	}
	return false;
}

static bool wanted(const ElfW(Sym) *s, size_t strsz)
{
	unsigned type = ELF64_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_size && (uint64_t)s->st_size <= UINT32_MAX && s->st_name && s->st_name < strsz;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct xc_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* The function symbols of @sym (@nsym of them), sorted, one per address, into tab. */
static void tab_fill(const ElfW(Sym) *sym, size_t nsym, size_t strsz)
{
	struct xc_sym *out;
	size_t n = 0, k = 0;

	for (size_t i = 0; i < nsym; i++)
		n += wanted(&sym[i], strsz);
	if (!n || n > XC_SYM_MAX_FUNCS || !(out = malloc(n * sizeof(*out))))
		return;
	for (size_t i = 0; i < nsym; i++) {
		unsigned bind = ELF64_ST_BIND(sym[i].st_info);

		if (!wanted(&sym[i], strsz))
			continue;
		out[k++] = (struct xc_sym){
			.start = (uintptr_t)sym[i].st_value,
			.size = (uint32_t)sym[i].st_size,
			.name = sym[i].st_name,
			.rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
		};
	}
	qsort(out, n, sizeof(*out), sym_cmp);
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || out[i].start != out[k - 1].start)
			out[k++] = out[i];
	tab.syms = out;
	tab.nr = k;
}

static void tab_load(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ElfW(Ehdr) eh;
	ElfW(Shdr) sh, symsh, strsh;
	struct stat stbuf;
	bool have = false;
	void *symbase = NULL, *strbase = NULL;
	size_t symmaplen = 0, strmaplen = 0;
	const ElfW(Sym) *sym;
	const char *str;

	if (fd < 0)
		return;
	if (fstat(fd, &stbuf) || !read_at(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_shentsize != sizeof(sh) || !load_bias(fd, &eh, &tab.bias))
		goto out;
	/* .symtab has every function, static ones too; .dynsym is what strip leaves */
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		if (!read_at(fd, &sh, sizeof(sh), eh.e_shoff + (uint64_t)i * sizeof(sh)))
			goto out;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !have)) {
			symsh = sh;
			have = true;
		}
	}
	if (!have || symsh.sh_entsize != sizeof(*sym) || !symsh.sh_link ||
	    symsh.sh_link >= eh.e_shnum ||
	    !read_at(fd, &strsh, sizeof(strsh), eh.e_shoff + (uint64_t)symsh.sh_link * sizeof(sh)) ||
	    strsh.sh_type != SHT_STRTAB)
		goto out;
	sym = map_section(fd, &symsh, (uint64_t)stbuf.st_size, &symbase, &symmaplen);
	str = map_section(fd, &strsh, (uint64_t)stbuf.st_size, &strbase, &strmaplen);
	/* a string table that ends in NUL: every name in it is terminated */
	if (sym && str && !str[strsh.sh_size - 1])
		tab_fill(sym, (size_t)(symsh.sh_size / sizeof(*sym)), (size_t)strsh.sh_size);
	if (tab.nr)
		tab.strtab = str;
	else if (strbase)
		munmap(strbase, strmaplen);
	if (symbase)
		munmap(symbase, symmaplen);
out:
	close(fd);
}

/* @fn in the executable's symbol table, named into @buf; false if not there. */
static bool elf_symbol(const void *fn, char *buf, size_t n)
{
	uintptr_t a;
	size_t lo = 0, hi;

	pthread_once(&tab_once, tab_load);
	a = (uintptr_t)fn - tab.bias;
	hi = tab.nr;
	while (lo < hi) {	/* lo: past the last symbol that starts at or below a */
		size_t mid = lo + (hi - lo) / 2;

		if (tab.syms[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest start that holds a, as dladdr() picks; functions rarely nest */
	for (size_t i = lo; i-- > 0 && lo - i <= XC_SYM_BACK;) {
		const struct xc_sym *s = &tab.syms[i];

		if (a - s->start < s->size) {
			name_off(buf, n, tab.strtab + s->name, a - s->start);
			return true;
		}
	}
	return false;
}

/* A function's name for reports and traces: its symbol (+offset), else its address. */
const char *xc_symbol(const void *fn, char *buf, size_t n)
{
	Dl_info info;

	if (!fn)
		snprintf(buf, n, "-");
	else if (dladdr(fn, &info) && info.dli_sname)
		name_off(buf, n, info.dli_sname,
			 (uintptr_t)((const char *)fn - (const char *)info.dli_saddr));
	else if (!elf_symbol(fn, buf, n))
		snprintf(buf, n, "%p", fn);
	return buf;
}
