#!/usr/bin/env bash
# A server's own Tcl test suite (Redis', from the installed redis-server's source
# package; with "valkey", Valkey's, from valkey-server's) in its external-server mode
# against ephpm-resp on a loopback port: the units of the commands ephpm serves. Each
# test the runner reports is one line here: "ok - UNIT: NAME", "FAIL - UNIT: NAME" (with
# the runner's first lines of why), "skip - UNIT: NAME (why)". Debian 12 runs Redis 7.0's;
# the systems of php-tests/systems run Redis 8.0's and Valkey 8.1's and 9.1's.
#   php-tests/harness/redis-tcl-suite.sh SO [redis|valkey]   (SO: ignored, as test-all.sh passes it)
# The server is target/release/ephpm-resp (build it first). REDIS_TCL_SRC=DIR runs
# another copy of a source tree (by default target/server-src/PACKAGE-VERSION, fetched
# once, see server_source below, and reused).
#
# What is out of scope is decided by one rule, not test by test:
#  1. the suite's own tags: tests tagged needs:debug, needs:repl, needs:save,
#     needs:config-maxmemory, needs:config-resetstat, needs:pfdebug, needs:latency or
#     needs:local-process (DEBUG, replication, persistence, CONFIG SET/RESETSTAT) are
#     denied with --tags; external:skip (a server of its own, with its own config) and
#     singledb:skip (databases other than 0) the runner drops itself in this mode;
#  2. the commands a test sends: a pre-pass (Tcl, below) reads every test's body and
#     the helper procs it calls (transitively, from tests/support, test_helper.tcl and
#     the unit), finds each Redis command sent through `r`, `r N`, `R N` or a variable
#     holding a client, and excludes the test (--skipfile) if one is a command of the
#     suite's server (its src/commands/*.json) outside the issue's list — lists, hashes, sets, sorted sets,
#     streams, DEBUG/OBJECT/MEMORY, SCRIPT/EVAL, RENAME/COPY/MOVE/SWAPDB/DUMP, bit
#     commands, LCS, PUBSUB introspection, CONFIG other than GET, CLIENT other than
#     SETNAME/GETNAME/ID/INFO/LIST/SETINFO/KILL, COMMAND other than COUNT/DOCS/INFO,
#     SELECT other than 0. Words that are no Redis command (a helper given a client, or a
#     test of the unknown-command error) do not exclude; "r $cmd" in a test of a literal
#     `foreach cmd {...}` loop is judged per value; a test "NAME (2)" goes with NAME
#     (it reads what NAME wrote).
# Nothing of the suite is edited: the external mode sends FLUSHALL and FUNCTION FLUSH
# (Redis 8.0 also SCRIPT FLUSH, CONFIG RESETSTAT and CONFIG GET *) before each server
# block and `DEBUG LOG` (errors ignored) before each test, so the server must answer
# those for any unit to run.
# Runner options: --singledb (no SELECT 9), --ignore-encoding and --ignore-digest (no
# OBJECT ENCODING or DEBUG DIGEST), --durable (an unexpected error reply fails its test
# instead of aborting the unit), one unit per run (an exception ends only its unit).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
server="$root/target/release/ephpm-resp"
# Whose suite: redis (redis-server's source package) or valkey (valkey-server's).
family=${2:-redis}
case $family in
    redis|valkey) server_pkg=$family-server; label=$family-tcl ;;
    *) echo "usage: $0 SO [redis|valkey]" >&2; exit 2 ;;
esac
units="unit/type/string unit/type/incr unit/expire unit/keyspace unit/scan unit/protocol
       unit/quit unit/info-command unit/auth unit/pubsub unit/multi"
deny="-needs:debug -needs:repl -needs:save -needs:config-maxmemory -needs:config-resetstat
      -needs:pfdebug -needs:latency -needs:local-process"
tmp=$(mktemp -d)
store="tcl_$$"
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp" "/dev/shm/ephpm-$(id -u)/$store" "/dev/shm/ephpm-$(id -u)/$store".*
}
trap cleanup EXIT

for tool in tclsh redis-cli; do
    command -v "$tool" >/dev/null || { skip "$tool is not installed (packages tcl, redis-tools)"; summary "$label"; exit 0; }
done
[ -x "$server" ] || { skip "$server is not built"; summary "$label"; exit 0; }

# The source, once per version, in target/server-src/PACKAGE-VERSION: the installed
# server's own source package (`apt-get source`, download and unpack only, Debian's
# patches applied); where the mirror serves only the upstream tarball of a source
# package (Debian 13's redis and valkey: their .dsc answers 404), that tarball, which
# holds the same tests/ without Debian's patches. Nothing is built: the suite needs no
# binaries of the server's.
server_source() {
    local pkg=$1 version dir work uri
    version=$(dpkg-query -W -f='${source:Version}' "$server_pkg" 2>/dev/null)
    [ -n "$version" ] || { echo "$server_pkg is not installed"; return 1; }
    dir="$root/target/server-src/$pkg-${version//[:~]/_}"
    [ -d "$dir" ] && { echo "$dir"; return 0; }
    command -v dpkg-source >/dev/null || { echo "dpkg-source is not installed (dpkg-dev)"; return 1; }
    apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Version:' || { add_deb_src; apt-get update -qq; }
    work=$(mktemp -d "$root/target/server-src.XXXXXX")
    chmod 755 "$work"   # apt's _apt user downloads into it
    if (cd "$work" && apt-get source --download-only -qq "$pkg=$version" >/dev/null 2>&1 \
            && dpkg-source -x ./*.dsc src >/dev/null 2>&1); then
        :
    else
        uri=$(apt-get source --print-uris -qq "$pkg=$version" 2>/dev/null \
            | sed -n "s/^'\([^']*\.orig\.tar\.[a-z0-9]*\)'.*/\1/p" | head -n 1)
        [ -n "$uri" ] && /usr/lib/apt/apt-helper download-file "$uri" "$work/orig.tar" >/dev/null 2>&1 \
            && mkdir "$work/x" && tar -xf "$work/orig.tar" -C "$work/x" \
            && mv "$work/x/"* "$work/src" \
            || { rm -rf "$work"; echo "neither apt-get source $pkg=$version nor its upstream tarball could be had"; return 1; }
    fi
    mkdir -p "$root/target/server-src" && mv "$work/src" "$dir" && rm -rf "$work" && echo "$dir"
}
src=${REDIS_TCL_SRC:-}
if [ -z "$src" ]; then
    src=$(server_source "$family") || { check "$family's test suite can be had ($src)" 0 1; summary "$label"; exit 1; }
fi
src=${src%/}

# The exclusion rule's second part (see the top): one line per excluded test,
# "UNIT<TAB>NAME-OR-/REGEXP<TAB>the command that puts it out of scope".
cat >"$tmp/scope.tcl" <<'TCL'
# usage: tclsh scope.tcl TESTS_DIR UNIT... -> one line per out-of-scope test:
#   unit <TAB> skiptest-pattern <TAB> reason
# The issue's commands, with the counterparts that undo them (UNSUBSCRIBE, PUNSUBSCRIBE,
# UNWATCH) and PEXPIRETIME beside EXPIRETIME; subcommands where the issue names some.
set allow {get set setnx setex psetex getset getdel getex mget mset msetnx append strlen
    getrange setrange incr incrby incrbyfloat decr decrby del unlink exists type expire
    pexpire expireat pexpireat ttl pttl expiretime pexpiretime persist keys scan randomkey
    dbsize flushdb flushall ping echo hello auth select quit reset client info command
    config time publish subscribe psubscribe unsubscribe punsubscribe multi exec discard
    watch unwatch delifeq}
array set subs {config {get} client {setname getname id info list setinfo kill}
    command {count docs info} select {0}}
set methods {blocking reconnect read rawread write flush close channel deferred readraw
    readingraw attributes}
set dir [lindex $argv 0]
# Redis 7.0's own command table (src/commands/*.json): a word that is not a Redis
# command is not one sent to the server (a helper taking a client, or a test of the
# unknown-command error, which is in scope).
set redis_cmds {}
foreach f [glob $dir/../src/commands/*.json] {
    set n [file rootname [file tail $f]]
    lappend redis_cmds $n [lindex [split $n -] 0]
}
proc slurp {f} { set fd [open $f]; set t [read $fd]; close $fd; return $t }
# commands sent by TEXT through r, "r N", "R N" or a variable holding a client; a
# command word that is a variable ("r $cmd") stands for each value a literal
# `foreach VAR {...}` of the unit gives it
proc sent {text} {
    global clientvars loopvals
    set out {}
    set cv [join [concat $clientvars {rd rd1 rd2 r1 r2}] |]
    set re "(?:^|\[\\s\\\[\{;\])(?:r(?:\\s+-?\\d+)?|R\\s+(?:\\d+|\\\$\\w+)|\\\$(?:$cv))\\s+(\\\$\\w+|\[A-Za-z\]\[\\w.|-\]*)(?:\[ \\t\]+(\[^\\s\\\]\}\]+))?"
    foreach {all cmd sub} [regexp -all -inline -- $re $text] {
        if {[string index $cmd 0] eq "\$"} {
            set v [string range $cmd 1 end]
            if {[info exists loopvals($v)]} { foreach c $loopvals($v) { lappend out [string tolower $c] [string tolower $sub] } }
            continue
        }
        lappend out [string tolower $cmd] [string tolower $sub]
    }
    return $out
}
# the first out-of-scope command in the pairs, or ""
proc bad {pairs} {
    global allow subs methods redis_cmds
    foreach {c s} $pairs {
        if {$c in $methods || $c ni $redis_cmds} continue
        if {$c ni $allow} { return $c }
        if {[info exists subs($c)] && $s ne "" && [string index $s 0] ne "\$" && $s ni $subs($c)} {
            return "$c $s"
        }
    }
    return ""
}
# the commands (words starting with WORD) found in TEXT: returns list of {start complete-cmd}
proc commands {text word} {
    set res {}
    set lines [split $text \n]
    for {set i 0} {$i < [llength $lines]} {incr i} {
        if {![regexp "^\\s*$word\\s" [lindex $lines $i]]} continue
        set cmd [lindex $lines $i]; set j $i
        while {![info complete $cmd] && $j < [llength $lines] - 1} { incr j; append cmd \n [lindex $lines $j] }
        lappend res [string trim $cmd]
    }
    return $res
}
set clientvars {}
set procs {}
set files [concat [glob $dir/support/*.tcl] [list $dir/test_helper.tcl]]
foreach u [lrange $argv 1 end] { lappend files $dir/$u.tcl }
foreach f $files {
    set t [slurp $f]
    foreach {- v} [regexp -all -inline {set (\w+) \[(?:redis_deferring_client|redis_client|redis)\M} $t] { lappend clientvars $v }
}
set clientvars [lsort -unique $clientvars]
# helpers: a proc's commands are its own plus those of the procs it calls; a proc that
# consults an option this harness passes (--singledb, --ignore-encoding, --ignore-digest)
# is written to be neutral under it and counts as sending nothing, and what a helper
# sends inside `catch {...}` it does without (the runner's `$r debug log` per test).
proc strip_catch {text} {
    while {[set i [string first "catch \{" $text]] >= 0} {
        set j [expr {$i + 7}]
        while {$j < [string length $text] && !([string index $text $j] eq "\}" && [info complete [string range $text $i+6 $j]])} { incr j }
        set text [string replace $text $i $j]
    }
    return $text
}
array set body {}
foreach f $files {
    foreach c [commands [slurp $f] proc] {
        if {[catch {set name [lindex $c 1]; set b [lindex $c 3]}]} continue
        if {[regexp {\$::(singledb|ignoreencoding|ignoredigest)} $b]} { set b "" }
        set body($name) [strip_catch $b]
    }
}
proc callees {text} {
    global body
    set out {}
    foreach p [array names body] {
        if {[regexp -- "(?:^|\[\\s\\\[\{;\])[string map {: \\:} $p](?=\[\\s\\\]\}\]|$)" $text]} { lappend out $p }
    }
    return $out
}
array set direct {}
foreach p [array names body] { set direct($p) [sent $body($p)]; set calls($p) [callees $body($p)] }
array set all [array get direct]
for {set changed 1} {$changed} {} {
    set changed 0
    foreach p [array names body] {
        foreach q $calls($p) {
            foreach {c s} $all($q) {
                if {[lsearch -exact $all($p) $c] < 0} { lappend all($p) $c $s; set changed 1 }
            }
        }
    }
}
proc name_pattern {raw} {
    set n [string range $raw 1 end-1]
    if {[string index $raw 0] eq "\{"} { return $n }
    if {[string index $raw 0] ne "\""} { set n $raw }
    if {![regexp {[$\[]} $n]} { return $n }
    set p [regsub -all {[][\\.*+?(){}^$|]} $n {\\&}]
    set p [regsub -all {\\\$\\\{\w+\\\}|\\\$\w+(?:\\\(\w+\\\))?|\\\[[^\\]*\\\]} $p {.*}]
    return "/^$p\$"
}
foreach u [lrange $argv 1 end] {
    array unset loopvals
    foreach {- v vals} [regexp -all -inline {foreach\s+\{?(\w+)\}?\s+\{([^][{}$]*)\}} [slurp $dir/$u.tcl]] {
        lappend loopvals($v) {*}$vals
    }
    # "NAME (2)" continues the test NAME (it reads what NAME left): excluded with it
    set out_names {}
    foreach c [commands [slurp $dir/$u.tcl] test] {
        # the name as written (quotes or braces included); the rest is analysed whole
        set rest [string trimleft [string range $c 4 end]]
        if {[string index $rest 0] eq "\""} { regexp {^"(?:[^"\\]|\\.)*"} $rest rw } \
        elseif {[string index $rest 0] eq "\{"} {
            for {set k 1} {![info complete [string range $rest 0 $k]] || [string index $rest $k] ne "\}"} {incr k} {}
            set rw [string range $rest 0 $k]
        } else { regexp {^\S+} $rest rw }
        set b [string range $rest [string length $rw] end]
        # a test in a literal loop whose name shows the loop variable ("MULTI with $cmd"):
        # one test per value, each judged with the value in its name and body
        set vars [lsort -unique [regexp -all -inline {\$\w+} $rw]]; set var [lindex $vars 0]
        set variants [list $rw $b]
        set loopvar [string range $var 1 end]
        if {[string index $rw 0] eq "\"" && [llength $vars] == 1 && [info exists loopvals($loopvar)]} {
            set variants {}
            foreach val $loopvals($loopvar) {
                lappend variants [string map [list $var $val] $rw] [string map [list $var $val] $b]
            }
            # and the name as a pattern, judged without the loop's values: the variable
            # may take others (a loop over an array, not this literal one), and a body
            # whose own commands are out of scope is out whatever it is
            lappend variants $rw $b
        }
        foreach {rw b} $variants {
            if {[regexp {\$\w} $rw]} {
                set kept [array get loopvals]; array unset loopvals $loopvar
                set pairs [sent $b]
                array set loopvals $kept
            } else { set pairs [sent $b] }
            foreach q [callees $b] { lappend pairs {*}$all($q) }
            set why [bad $pairs]
            if {$why ne ""} { set why "uses [string toupper $why]" }
            if {$why eq "" && [regexp {^(.*) \(\d+\)$} [string range $rw 1 end-1] -> first] && $first in $out_names} {
                set why "continues \"$first\""
            }
            if {$why ne "" && [string range $rw 1 end-1] ni $out_names} {
                puts "$u\t[name_pattern $rw]\t$why"; lappend out_names [string range $rw 1 end-1]
            }
        }
    }
}
TCL
# The runner's report, as this harness's lines: argv UNIT EXCLUDED-TSV, runner output
# on stdin. [ok] passes; [err] and [exception] fail (with the first lines of why);
# [skip] is the rule's --skipfile (with the command that excluded it); [ignore] is a
# tag (a whole server block when it names no test).
cat >"$tmp/report.tcl" <<'TCL'
lassign $argv unit tsv
set excluded {}
set fd [open $tsv]
foreach line [split [read $fd] \n] {
    lassign [split $line \t] u pat why
    if {$u eq $unit} { lappend excluded $pat $why }
}
close $fd
proc why_excluded {name} {
    foreach {pat why} $::excluded {
        if {$pat eq $name || ([string index $pat 0] eq "/" && [regexp -- [string range $pat 1 end] $name])} {
            return "$why: out of scope"
        }
    }
    return "excluded"
}
set pending ""; set detail {}
proc flush_fail {} {
    if {$::pending eq ""} return
    puts "FAIL\t$::pending"
    foreach d [lrange $::detail 0 5] { puts "#\t    [string range $d 0 300]" }
    set ::pending ""; set ::detail {}
}
while {[gets stdin line] >= 0} {
    if {[regexp {^\[(ok|err|skip|ignore|exception)\]: (.*)$} $line -> st rest]} {
        flush_fail
        switch $st {
            ok { regsub { \(\d+ ms\)$} $rest {} rest; puts "ok\t$rest" }
            err { regsub { in tests/\S+\.tcl$} $rest {} rest; set pending $rest }
            exception { set pending "exception: $rest" }
            skip { puts "skip\t$rest ([why_excluded $rest])" }
            ignore {
                if {[regexp {^(.*): (Tag: .*|Not supported .*)$} $rest -> n why]} { puts "skip\t$n ($why)" } \
                else { puts "skip\ta server block ($rest)" }
            }
        }
    } elseif {$pending ne "" && [string trim $line] ne "" && ![string match {\[*} $line]} {
        lappend detail [string trim $line]
    } else { flush_fail }
}
flush_fail
TCL
(cd "$src/tests" && tclsh "$tmp/scope.tcl" . $units) >"$tmp/excluded.tsv" || { check "the exclusion pre-pass runs" 0 1; summary "$label"; exit 1; }
cut -f2 "$tmp/excluded.tsv" >"$tmp/skipfile"

port=$((20000 + RANDOM % 20000))
setsid "$server" --store "$store" --no-socket --tcp "127.0.0.1:$port" --allow-insecure-no-auth \
    --shm-size 64M >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

# Valkey 9's runner will not start unless a server binary is where it looks (it starts
# none in external mode: the tests that would are tagged external:skip).
mkdir "$tmp/bin" && ln -s "$server" "$tmp/bin/valkey-server" && ln -s "$(command -v redis-cli)" "$tmp/bin/valkey-cli"
for unit in $units; do
    # TERM=dumb: no colours in the runner's report. 150 s a unit at most (the
    # expire unit's sleeps take about 30).
    (cd "$src" && VALKEY_BIN_DIR="$tmp/bin" TERM=dumb timeout 150 ./runtest --host 127.0.0.1 --port "$port" --singledb \
        --ignore-encoding --ignore-digest --durable --timeout 120 --tags "$deny" \
        --skipfile "$tmp/skipfile" --single "$unit") >"$tmp/run.out" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "[exception]: timed out after 150 s" >>"$tmp/run.out"
    while IFS=$'\t' read -r st what more; do
        case $st in
            ok) passed=$((passed + 1)); echo "ok - $unit: $what" ;;
            FAIL) failed=$((failed + 1)); echo "FAIL - $unit: $what" ;;
            skip) skip "$unit: $what" ;;
            '#') echo "#   $what" ;;
        esac
    done < <(tclsh "$tmp/report.tcl" "$unit" "$tmp/excluded.tsv" <"$tmp/run.out")
    # A unit that reported no test at all is a failure of its own (runner broken).
    grep -qE '^\[(ok|err|skip|ignore|exception)\]' "$tmp/run.out" || { failed=$((failed + 1)); echo "FAIL - $unit: the runner reported nothing"; tail -n 5 "$tmp/run.out" | sed 's/^/#   /'; }
done
check "ephpm-resp still serves after the suite" PONG "$(redis-cli -p "$port" ping 2>&1)"
summary "$label"
