// The names that the fragments of the article "Testing with a manual clock" assume, so that
// Scripts/check-dependent-package.sh can compile them as a dependent package would.
import OfflineTTL

private let start = WallClockInstant(nanosecondsSinceEpoch: 1_700_000_000_000_000_000)
