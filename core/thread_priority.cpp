#include "core/thread_priority.hpp"

#include <pthread.h>
#include <sched.h>

namespace labpose {

bool move_this_thread_to_background() {
#ifdef SCHED_IDLE
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0;
#else
  return false;
#endif
}

}  // namespace labpose
