package relaypackage

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"time"
)

// BootstrapName is the name of the executable in a provided.al2023 package.
const BootstrapName = "bootstrap"

// zipTime is the modification time of every entry, so that the same binary
// always gives the same zip, and the same CodeSha256.
var zipTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteZip writes a deployment package holding one entry, bootstrap, with
// the given content, mode 0755 and a fixed time. The output depends only on
// the content.
func WriteZip(w io.Writer, bootstrap []byte) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	h := &zip.FileHeader{Name: BootstrapName, Method: zip.Deflate, Modified: zipTime}
	h.SetMode(0o755)
	f, err := zw.CreateHeader(h)
	if err != nil {
		return fmt.Errorf("adding %s to the zip: %w", BootstrapName, err)
	}
	if _, err := io.Copy(f, bytes.NewReader(bootstrap)); err != nil {
		return fmt.Errorf("writing %s to the zip: %w", BootstrapName, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("finishing the zip: %w", err)
	}
	return nil
}
