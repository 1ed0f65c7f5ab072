package peertest

import "os"

func writeFile(path string) error { return os.WriteFile(path, []byte("not a directory"), 0o644) }
