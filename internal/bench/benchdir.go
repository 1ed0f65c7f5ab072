package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Layout of RunSpec.Config.Dir:
//
//	.strata-bench   says strata bench created the directory, so that it
//	                may empty it; a directory without it is never wiped
//	load.json       written after a complete load (loadMarker)
//	db/             the engine's own directory (Config.Dir as the engine
//	                sees it; DiskBytes is its size)
//
// The engine gets a subdirectory because engines such as Strata refuse to
// create a database in a directory holding foreign files.
const (
	ownerFile      = ".strata-bench"
	loadMarkerFile = "load.json"
	engineSubdir   = "db"
)

// loadMarker describes the data a complete load left in the directory.
// A later run with Reuse skips its load when the identity fields match.
type loadMarker struct {
	Engine     string `json:"engine"`
	Dataset    string `json:"dataset"`
	TableSize  int64  `json:"table_size"`
	Seed       uint64 `json:"seed"`
	Codec      string `json:"codec"`
	PageSize   int    `json:"page_size"`
	FillFactor int    `json:"fill_factor"`
	// Dictionary is Strata's dictionary setting at load time: "trained"
	// (a dictionary was trained on the first pages, and kept if it paid)
	// or "off"; "" for other engines and for loads made before
	// dictionaries, which match neither.
	Dictionary string `json:"dictionary,omitempty"`

	LogicalBytes int64   `json:"logical_bytes"`
	LoadSeconds  float64 `json:"load_seconds"`
	// NextID is the next free id above the table: inserts of earlier runs
	// took the ids below it.
	NextID uint64 `json:"next_id"`
	// WriteRuns counts the measured runs that modified the table since
	// the load.
	WriteRuns int `json:"write_runs"`
	// Build is the revision of the binary that loaded the data (BuildOf;
	// "" where it recorded none, and in markers written before builds
	// were). Not part of the data's identity: a run of another build
	// reuses the data, and says so (staleLoadNote).
	Build string `json:"build,omitempty"`
}

// loaderBuild names the running binary's build in the load markers it
// writes and compares; a variable for tests, whose binaries record none.
var loaderBuild = OwnBuild

// staleLoadNote returns a note for a run that reuses data loaded by
// another build than the running one, else "". What a load leaves behind
// is its build's: Strata's store format and the dictionary the load
// trained (sweeps reused the twenty-fifth session's loads, made before
// the table dictionary, until the thirty-first session: their pages took
// about 1.5× as long to decompress as this code's loads of the same
// rows). An unrecorded build counts as another unless the running binary
// records none either.
func staleLoadNote(m loadMarker) string {
	own := loaderBuild()
	if m.Build == own {
		return ""
	}
	loaded := m.Build
	if loaded == "" {
		loaded = "a build that recorded no revision"
	}
	if own == "" {
		own = "unrecorded"
	}
	return fmt.Sprintf("the data was loaded by another build (%s; this run's: %s): what the load left (the engine's on-disk format, a trained dictionary) is that build's; load again (a fresh --dir, or without --keep) to measure this build's", loaded, own)
}

func markerFor(spec RunSpec) loadMarker {
	return loadMarker{
		Engine:     spec.Engine,
		Dataset:    spec.Dataset,
		TableSize:  spec.TableSize,
		Seed:       spec.Seed,
		Codec:      spec.Config.Codec,
		PageSize:   pageSizeMarker(spec),
		FillFactor: spec.Config.FillFactor,
		Dictionary: dictionaryMarker(spec),
	}
}

// StrataDefaultPageSize is Strata's default page size
// (pagestore.DefaultPageSize, which internal/bench does not import so that
// the peers' binaries do not link the page store;
// strataengine's TestDefaultPageSizeMatches keeps the two equal).
const StrataDefaultPageSize = 4096

// pageSizeMarker is loadMarker.PageSize for spec: Strata's default
// resolved, so that a load made under another default (16 KiB until the
// default became 4 KiB; its marker says 0) is not reused as the default's.
func pageSizeMarker(spec RunSpec) int {
	if spec.Engine == "strata" && spec.Config.PageSize == 0 {
		return StrataDefaultPageSize
	}
	return spec.Config.PageSize
}

// dictionaryMarker is loadMarker.Dictionary for spec.
func dictionaryMarker(spec RunSpec) string {
	switch {
	case spec.Engine != "strata":
		return ""
	case spec.Config.NoDictionary:
		return "off"
	}
	return "trained"
}

// sameData reports whether m describes the data spec would load.
func (m loadMarker) sameData(spec RunSpec) bool {
	want := markerFor(spec)
	return m.Engine == want.Engine && m.Dataset == want.Dataset && m.TableSize == want.TableSize &&
		m.Seed == want.Seed && m.Codec == want.Codec && m.PageSize == want.PageSize &&
		m.FillFactor == want.FillFactor && m.Dictionary == want.Dictionary && m.NextID >= uint64(m.TableSize)
}

// reusableLoad returns the marker of dir when it holds the data spec asks
// for.
func reusableLoad(dir string, spec RunSpec) (loadMarker, bool) {
	if _, err := os.Stat(filepath.Join(dir, ownerFile)); err != nil {
		return loadMarker{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, loadMarkerFile))
	if err != nil {
		return loadMarker{}, false
	}
	var m loadMarker
	if json.Unmarshal(b, &m) != nil || !m.sameData(spec) {
		return loadMarker{}, false
	}
	if _, err := os.Stat(filepath.Join(dir, engineSubdir)); err != nil {
		return loadMarker{}, false
	}
	return m, true
}

func writeLoadMarker(dir string, m loadMarker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: load marker: %w", err)
	}
	tmp := filepath.Join(dir, loadMarkerFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: write load marker: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, loadMarkerFile)); err != nil {
		return fmt.Errorf("bench: write load marker: %w", err)
	}
	return nil
}

// removeLoadMarker forgets the load before a run modifies the table, so
// that a run dying half-way leaves no marker vouching for the data.
func removeLoadMarker(dir string) error {
	err := os.Remove(filepath.Join(dir, loadMarkerFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bench: remove load marker: %w", err)
	}
	return nil
}

// OwnsDir reports whether dir is a directory strata bench made its own
// (it holds the owner file), whose contents it may delete.
func OwnsDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ownerFile))
	return err == nil
}

// prepareFreshDir makes dir an empty bench directory: it creates it, or
// empties one that strata bench created earlier. It refuses to touch a
// non-empty directory it did not create.
func prepareFreshDir(dir string) error {
	if dir == "" {
		return errors.New("bench: no directory (Config.Dir)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: create %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("bench: read %s: %w", dir, err)
	}
	owned := false
	for _, e := range entries {
		if e.Name() == ownerFile {
			owned = true
		}
	}
	if len(entries) > 0 && !owned {
		return fmt.Errorf("bench: %s is not empty and was not created by strata bench; give an empty or new directory", dir)
	}
	for _, e := range entries {
		if e.Name() == ownerFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("bench: empty %s: %w", dir, err)
		}
	}
	if !owned {
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte("created by strata bench; its contents may be deleted\n"), 0o644); err != nil {
			return fmt.Errorf("bench: mark %s: %w", dir, err)
		}
	}
	return nil
}
