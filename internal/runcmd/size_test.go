package runcmd

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "512": 512, "1KiB": 1 << 10, "1 GiB": 1 << 30, " 3MiB ": 3 << 20, "2TiB": 2 << 40,
		"16777215TiB": 16777215 << 40,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "1GB", "1.5GiB", "-1", "+1", "1 KiB MiB", "16777216TiB", "18446744073709551616", "0x10"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
