/* The VM as the runtime sees it (runtime/executor.h VmStrategy): the table
 * the delegate hands to a build, so that runtime/ never names vm_*. */
#include "vm/vm.h"

static size_t guard_bytes(void) { return vm_guard_bytes(1); }
static const char* overrun(const Executor* ex) { return ex->vm ? ex->vm->overrun : ""; }

static const VmStrategy kVm = {guard_bytes, VM_GUARD_PATTERN, vm_plan, vm_finish, vm_enqueue, overrun,
                               vm_aborted, vm_profile_collect, vm_free};

const VmStrategy* vm_strategy(void) { return &kVm; }
