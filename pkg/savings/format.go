package savings

import "fmt"

var sprintf = fmt.Sprintf

// mb is a size in megabytes (10^6 bytes, as the page and status show).
func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
