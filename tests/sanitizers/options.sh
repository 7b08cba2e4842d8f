# The sanitizers' run-time options, sourced by tools/test.sh and tools/check.sh: every finding
# fails the program, leaks included, with the suppressions of this folder (third-party code only).
sanitizers_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$sanitizers_dir/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="suppressions=$sanitizers_dir/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
