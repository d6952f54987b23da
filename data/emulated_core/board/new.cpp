/*
 * operator new/delete on malloc, as Arduino cores do: the library is built with
 * -fno-exceptions, and libstdc++'s throwing operator new would pull in the unwinder.
 * A failed allocation returns nullptr (there is nothing to throw).
 */
#include <stdlib.h>

#include <new>

void* operator new(size_t size) { return malloc(size); }
void* operator new[](size_t size) { return malloc(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return malloc(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return malloc(size); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }

extern "C" void __cxa_pure_virtual(void) { abort(); }
