//go:build !unix

package npmci

import (
	"errors"
	"os"
)

// errNoLock is the error of lockFile where there is no flock: the suites that install npm
// packages run on unix (CI runs Linux), and without the lock test binaries running at once
// would run npm ci in the same directory together. Install by hand there instead:
// npm ci --prefix DIR.
var errNoLock = errors.New("npmci installs under a flock, which it has on unix only: run npm ci --prefix DIR yourself")

// lockFile reports errNoLock: see there.
func lockFile(*os.File) (unlock func(), err error) { return nil, errNoLock }
