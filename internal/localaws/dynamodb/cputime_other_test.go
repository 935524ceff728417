//go:build !unix

package dynamodb_test

import "time"

// processCPU is not measured here: the benchmark reports wall rates only.
func processCPU() time.Duration { return 0 }
