/*
 * A stand-in for Windows's bcryptprimitives.dll, for running Go's Windows
 * test binaries under Wine 8, which lacks that DLL. Go 1.24 and later take
 * their random bytes from bcryptprimitives!ProcessPrng and will not start
 * without it. This one fills the buffer from advapi32's RtlGenRandom
 * (SystemFunction036), which Wine implements. Test environments only: it is
 * built into a Wine prefix under /tmp by setup.sh and never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	while (size > 0) {
		ULONG n = size > 0x10000000 ? 0x10000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
