#!/bin/sh
# completion.sh ATTN BASH_SCRIPT ZSH_SCRIPT - the shell completion made
# from the table of options: sourced in bash, asked for completions as
# bash asks (COMP_WORDS, COMP_CWORD, the function complete -F named),
# and compared with what it must offer; every option attn --help lists
# is among them; zsh reads its script and registers it for attn.
set -u

bin=$1
bash_script=$2
zsh_script=$3
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $bash_script in /*) ;; *) bash_script=$(pwd)/$bash_script ;; esac
case $zsh_script in /*) ;; *) zsh_script=$(pwd)/$zsh_script ;; esac
for shell in bash zsh; do
	if ! command -v $shell >/dev/null 2>&1; then
		echo "completion: $shell is missing (make test-deps installs it)"
		exit 1
	fi
done
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# Files to complete: a directory and two files.
mkdir -p "$work/files/data"
: >"$work/files/q.json"
: >"$work/files/queries.csv"

# Each line: the words typed (the last is the one being completed, '' for
# an empty one), a tab, then what must be offered, sorted, space-separated.
cat >"$work/cases" <<'CASES'
attn --st	--stage --stats
attn --se	--self --seqused-k
attn --cu	--cu-seqlens-k --cu-seqlens-q
attn --cu-seqlens-q d	data/
attn --quer	--query --query-labels
attn --query ''	
attn --fu	--full
attn -s ''	all bias delta dropped grad_bias grad_k grad_q grad_scaled grad_sinks grad_v grad_weights k k_rot lse mask output projected q q_rot scaled scores v weights
attn --stage we	weights
attn -s scores,we	scores,weights
attn --stage=sc	scaled scores
attn -f ''	csv html json npy npz table tsv txt
attn --format=j	json
attn --like ''	flash jax torch
attn --align b	bottom-right
attn --masked-rows ''	nan uniform zero
attn --color a	always auto
attn --color-range ''	max row unit
attn --mask q	q.json queries.csv
attn --self d	data/
attn --proj q	q.json queries.csv
attn --sinks d	data/
attn --alibi-slopes d	data/
attn --dropout-mask d	data/
attn --rope-style ''	half interleaved
attn --emulate ''	bf16 fp16 fp32 fp8-e4m3 fp8-e5m2
attn --emulate fp8	fp8-e4m3 fp8-e5m2
attn --emulate-order ''	k q
attn --emulate-o	--emulate-order
attn --desc	--descale-k --descale-q --descale-v
attn --descale-q q	q.json queries.csv
attn --kv-l	--kv-last-page-len --kv-layout
attn --kv-layout ''	hnd nhd
attn --block-table q	q.json queries.csv
attn --kv-indices d	data/
attn --key-leftpad d	data/
attn --svg q	q.json queries.csv
attn -d ''	
attn --heads ''	
attn q	q.json queries.csv
attn g	gen
attn w	workbench
attn so	softmax
attn softmax --valid	--valid-lens
attn ''	data/ gen help q.json queries.csv softmax workbench
attn h	help
attn help ''	attn gen kernels tutorial workbench
attn help k	kernels
attn help tutorial ''	
attn workbench --color-r	--color-range
attn workbench --color-range ''	max row unit
attn workbench q	q.json queries.csv
attn workbench --ch	
attn workbench --st	
attn workbench -o	
attn workbench --c	--causal --color --color-range --cu-seqlens-k --cu-seqlens-q
attn workbench --he	--heads --help
attn -e ''	data/ q.json queries.csv
attn gen --d	--digits --dist
attn gen --dist ''	normal uniform
attn gen --st	
attn gen --seed ''	
attn gen -f t	table tsv txt
CASES

# The bash side: one completion per line of cases, as bash would ask.
cat >"$work/ask.bash" <<'ASK'
source "$1"
cd "$2" || exit 1
while IFS='	' read -r typed want; do
	eval "COMP_WORDS=($typed)"
	COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
	# bash splits --name=value at the '=' (COMP_WORDBREAKS)
	if [[ ${COMP_WORDS[COMP_CWORD]} == --*=* ]]; then
		last=${COMP_WORDS[COMP_CWORD]}
		unset "COMP_WORDS[COMP_CWORD]"
		COMP_WORDS+=("${last%%=*}" = "${last#*=}")
		COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
	fi
	COMPREPLY=()
	_attn
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort |
	    tr '\n' ' ')
	got=${got% }
	# directories get their slash from -o filenames, as bash adds it
	got=$(for w in $got; do [[ -d $w ]] && echo "$w/" || echo "$w"; done |
	    tr '\n' ' ')
	got=${got% }
	if [[ $got == "$want" ]]; then
		echo "ok	$typed"
	else
		echo "FAIL	$typed: offered '$got', expected '$want'"
	fi
done
ASK
pass=0
fail=0
bash "$work/ask.bash" "$bash_script" "$work/files" <"$work/cases" \
    >"$work/out" 2>&1
pass=$(grep -c '^ok' "$work/out")
fail=$(grep -vc '^ok' "$work/out")
grep -v '^ok' "$work/out" | sed 's/^/completion: /'

# Every option --help lists is offered after -- (attn and attn gen).
for cmd in "attn" "attn gen"; do
	# shellcheck disable=SC2086
	"$bin" ${cmd#attn} --help |
	    sed -n 's/^  \(-[a-zA-Z], \)\{0,1\} *\(--[a-z][a-z-]*\).*/\2/p' |
	    sort -u >"$work/help"
	printf 'source "%s"; COMP_WORDS=(%s --); COMP_CWORD=%d; _attn; '\
'printf "%%s\\n" "${COMPREPLY[@]}"' "$bash_script" "$cmd" \
	    "$(echo "$cmd" | wc -w)" >"$work/all.bash"
	bash "$work/all.bash" | sort -u >"$work/offered"
	missing=$(comm -23 "$work/help" "$work/offered" | tr '\n' ' ')
	if [ -z "$missing" ] && [ -s "$work/help" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "completion: $cmd --help lists options not offered: $missing"
	fi
done

# After attn workbench, every option of attn is offered or refused, as
# attn workbench itself takes or refuses it: each run with a value it may
# take, without a terminal, which a run that took its options says it
# needs.
printf '1,0\n0,1\n1,1\n' >"$work/x.csv"
printf 'source "%s"; COMP_WORDS=(attn workbench --); COMP_CWORD=2; _attn; '\
'printf "%%s\\n" "${COMPREPLY[@]}"' "$bash_script" >"$work/wb.bash"
bash "$work/wb.bash" | sort -u >"$work/wb-offered"
"$bin" --help |
    sed -n 's/^  \(-[a-zA-Z], \)\{0,1\} *\(--[a-z][a-z-]*\).*/\2/p' |
    sort -u >"$work/attn-options"
wrong=
for opt in $(cat "$work/attn-options"); do
	# the inputs: --self X, or X for --proj LAYER X and --self itself
	base='--self x.csv'
	case $opt in
	--self) base= ;;
	--proj) base=x.csv ;;
	esac
	case $opt in
	--stage) val=output ;;
	--format) val=json ;;
	--npy-dtype) val=f4 ;;
	--digits | --threads | --heads | --kv-heads | --query) val=1 ;;
	--scale) val=0.5 ;;
	--self | --mask | --bias | --grad | --proj | --sinks | --check)
		val=x.csv ;;
	--alibi-slopes) val=x.csv ;;
	--block-table | --kv-indptr | --kv-indices | --kv-last-page-len)
		val=x.csv ;;
	--kv-layout) val='hnd --block-table x.csv' ;;
	--key-leftpad) val=0 ;;
	--dropout-mask) val='x.csv --dropout-p 0.5' ;;
	--dropout-p) val='0.5 --dropout-mask x.csv' ;;
	--mask-invert) val='--mask x.csv' ;;
	--rope-style) val='half --rope' ;;
	--svg) val=w.svg ;;
	--output) val=w.txt ;;
	--window) val=1,1 ;;
	--softcap) val=3 ;;
	--align) val=bottom-right ;;
	--masked-rows) val=nan ;;
	--like) val=torch ;;
	--lse-base) val=2 ;;
	--lse-masked) val=inf ;;
	--cu-seqlens-q) val='0,3 --cu-seqlens-k 0,3' ;;
	--cu-seqlens-k) val='0,3 --cu-seqlens-q 0,3' ;;
	--seqused-k | --valid-lens) val=3 ;;
	--layout) val=bshd ;;
	--query-labels | --key-labels) val=a,b,c ;;
	--color) val=never ;;
	--color-range) val=max ;;
	--rtol | --atol) val=0.001 ;;
	--emulate) val=fp32 ;;
	--emulate-order) val=k ;;
	--descale-q | --descale-k | --descale-v) val=0.5 ;;
	--factor) val=2 ;;
	--check-by) val=tensor ;;
	*) val= ;;
	esac
	# shellcheck disable=SC2086
	(cd "$work" && "$bin" workbench $base $opt $val \
	    </dev/null >/dev/null 2>"$work/wb-err")
	status=$?
	if [ $status -eq 0 ] || grep -q 'needs a terminal' "$work/wb-err"
	then
		took=1
	else
		took=0
	fi
	if grep -qx -e "$opt" "$work/wb-offered"; then
		offered=1
	else
		offered=0
	fi
	[ $took -eq $offered ] ||
	    wrong="$wrong $opt (offered $offered, taken $took:"\
" $(head -n 1 "$work/wb-err"))"
done
if [ -z "$wrong" ] && [ -s "$work/wb-offered" ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "completion: attn workbench offers what it refuses or" \
	    "not what it takes:$wrong"
fi

# zsh: the script parses, and compinit registers it for attn.
mkdir "$work/fpath"
cp "$zsh_script" "$work/fpath/_attn"
if zsh -n "$zsh_script" && zsh -f -c "fpath=($work/fpath \$fpath);
    autoload -Uz compinit; compinit -u -d $work/zcompdump;
    [[ \$_comps[attn] == _attn ]]"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "completion: zsh does not register _attn for attn"
fi

echo "completion: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
