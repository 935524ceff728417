// Package relaypackage holds the relay Lambda function's deployment
// packages, built from ./relay-lambda for provided.al2023, so that the
// provider can upload the function without any build step of its own.
//
// The zips are build output, not source: `make build` or
// `go generate ./internal/relaypackage` writes them to dist/ before the
// provider is compiled. Without them the package still compiles, and Zip
// says how to build them.
package relaypackage

//go:generate go run ./gen

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// Lambda architectures.
const (
	ArchARM64  = "arm64"
	ArchX86_64 = "x86_64"
)

// Architectures lists the architectures a package is built for, in Lambda's
// names.
var Architectures = []string{ArchARM64, ArchX86_64}

//go:embed dist
var dist embed.FS

// ErrNotBuilt is returned when the package of an architecture was not built
// into this binary.
var ErrNotBuilt = errors.New("relay deployment package not built")

// architecture is how a Lambda architecture is built and stored.
type architecture struct {
	file   string // the zip in dist/
	goarch string
}

// architectures are the Lambda architectures, and Go's name of x86_64.
var architectures = map[string]architecture{
	ArchARM64:  {file: "relay_arm64.zip", goarch: "arm64"},
	ArchX86_64: {file: "relay_x86_64.zip", goarch: "amd64"},
	"amd64":    {file: "relay_x86_64.zip", goarch: "amd64"},
}

func architectureOf(arch string) (architecture, error) {
	if a, ok := architectures[arch]; ok {
		return a, nil
	}
	return architecture{}, fmt.Errorf("relay deployment package: unknown architecture %q: use %q or %q", arch, ArchARM64, ArchX86_64)
}

// FileName returns the name of the zip of arch in dist/: relay_<arch>.zip.
func FileName(arch string) (string, error) {
	a, err := architectureOf(arch)
	return a.file, err
}

// GOARCH returns the Go architecture of a Lambda architecture.
func GOARCH(arch string) (string, error) {
	a, err := architectureOf(arch)
	return a.goarch, err
}

// Zip returns the deployment package for arch ("arm64" or "x86_64"): a zip
// holding the executable bootstrap.
func Zip(arch string) ([]byte, error) { return zipFrom(dist, arch) }

// SHA256 returns the base64-encoded SHA-256 of the package for arch, as
// Lambda reports it in CodeSha256.
func SHA256(arch string) (string, error) { return sha256From(dist, arch) }

func zipFrom(fsys fs.FS, arch string) ([]byte, error) {
	name, err := FileName(arch)
	if err != nil {
		return nil, err
	}
	b, err := fs.ReadFile(fsys, path.Join("dist", name))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(b) == 0) {
		return nil, fmt.Errorf("%w for %s: dist/%s is missing from this build of the provider; run `make build` (or `go generate ./internal/relaypackage`) and rebuild", ErrNotBuilt, arch, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading relay deployment package %s: %w", name, err)
	}
	return b, nil
}

func sha256From(fsys fs.FS, arch string) (string, error) {
	b, err := zipFrom(fsys, arch)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}
