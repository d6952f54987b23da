/*
 * The C++ exception entry points for sketches built with -fno-exceptions: each stops the
 * program. The board core links the same kind of stubs (its cores/arduino/abi.cpp, forced
 * in by `-Wl,-u,__cxa_allocate_exception` in its platform.txt) so that libstdc++'s
 * exception objects and libgcc's unwinder stay out of a Dynamic (loadable extension)
 * link; the check's Dynamic link (generator/check/dynamic.py) needs them for the same
 * reason. In core.a, so a static link takes them only when something calls them.
 */
#include <stddef.h>
#include <stdlib.h>

extern "C" {
void* __cxa_allocate_exception(size_t) { abort(); }
void __cxa_free_exception(void*) { abort(); }
void __cxa_throw(void*, void*, void (*)(void*)) { abort(); }
void* __cxa_begin_catch(void*) { abort(); }
void __cxa_end_catch(void) { abort(); }
void __cxa_rethrow(void) { abort(); }
}
