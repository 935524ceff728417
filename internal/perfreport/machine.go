package perfreport

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the measurements ran.
type Machine struct {
	CPU      string
	Cores    int
	OS, Arch string
	Go       string
	// LoadBefore and LoadAfter are /proc/loadavg's 1, 5 and 15 minute
	// averages when the run started and ended.
	LoadBefore, LoadAfter string
}

// ThisMachine describes this machine now (LoadAfter is left empty).
func ThisMachine() Machine {
	return Machine{
		CPU: cpuModel(), Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		Go: runtime.Version(), LoadBefore: LoadAverage(),
	}
}

// LoadAverage returns the 1, 5 and 15 minute load averages, or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
