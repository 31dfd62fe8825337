#!/usr/bin/env bash
# Regenerates perf61_demangled_names.tsv from demangle_corpus.txt (one mangled
# name per line) by recording a program whose functions carry exactly those
# symbol names and reading back perf script's names. Needs perf, gcc, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
python3 - "$here/demangle_corpus.txt" <<'PY'
import sys
names=[l.strip() for l in open(sys.argv[1]) if l.strip()]
with open('names.s','w') as f:
    f.write('.text\n')
    for n in names:
        q='"%s"'%n
        f.write(f'.globl {q}\n.type {q}, @function\n.p2align 4\n{q}:\n  mov $3000000, %ecx\n1: dec %ecx\n  jnz 1b\n  ret\n.size {q}, .-{q}\n')
    f.write('.section .rodata\n.globl fn_table\nfn_table:\n')
    for n in names: f.write(f'  .quad "{n}"\n')
    f.write(f'.globl fn_count\nfn_count: .quad {len(names)}\n.section .note.GNU-stack,"",@progbits\n')
open('names_main.c','w').write('extern void (*const fn_table[])(void); extern const long fn_count;\n'
  'int main(void){ for(int r=0;r<4;r++) for(long i=0;i<fn_count;i++) fn_table[i](); return 0; }\n')
PY
gcc -O1 -no-pie -o names names_main.c names.s
perf record -q -o names.data -e cpu-clock:u -F 4000 ./names
nm names | awk '$2=="T"{print $1, $3}' > addr.txt
DEBUGINFOD_URLS= perf script -i names.data -F ip,sym | python3 -c '
import sys,bisect
a=sorted((int(l.split()[0],16),l.split(None,1)[1].strip()) for l in open("addr.txt"))
starts=[x[0] for x in a]
wanted=set(l.strip() for l in open(sys.argv[1]))
res={}
for l in sys.stdin:
    p=l.strip().split(None,1)
    if len(p)<2: continue
    i=bisect.bisect_right(starts,int(p[0],16))-1
    if i>=0 and a[i][1] in wanted: res[a[i][1]]=p[1]
for k,v in sorted(res.items()): print(k+"\t"+v)
' "$here/demangle_corpus.txt" > "$here/perf61_demangled_names.tsv"
