/* bcryptprimitives.dll for wine 8, which lacks ProcessPrng (Rust's std draws its random
 * numbers from it since Rust 1.78): the function, over advapi32's RtlGenRandom. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
