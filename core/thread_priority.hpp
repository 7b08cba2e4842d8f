// Background priority for helper threads that share the cores with a compute-bound thread team
// (video decoding beside a network running on the CPU): the scheduler then gives them the moments
// the team leaves idle instead of preempting its threads, which would stall the whole team at its
// next barrier.
#pragma once

namespace labpose {

/// Moves the calling thread (and threads it starts later) to the lowest CPU priority: Linux's
/// SCHED_IDLE. Best effort: false when the system refuses; a thread cannot raise it back
/// unprivileged, so call it only on threads made for the background work.
bool move_this_thread_to_background();

}  // namespace labpose
