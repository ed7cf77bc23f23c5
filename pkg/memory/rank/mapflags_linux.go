package rank

import "syscall"

// mapFlags: private, and populated at once (one pass of the kernel over
// the cached pages instead of one fault per page as the decoder reads).
const mapFlags = syscall.MAP_PRIVATE | syscall.MAP_POPULATE
