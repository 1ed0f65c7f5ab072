package flashcache

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/stratadb/strata/internal/vfs"
)

// Opening, closing and persistence across restarts.
//
// What may be reused. An entry on flash is a page's image as the page
// store held it when the page left RAM. It is still the page's current
// version only if no write or free of the page reached the store since
// without invalidating it. Within a session every write and free goes
// through the cache (Invalidate), so the RAM index is exact. Across a
// restart the cache must know that the same holds for the whole time
// between the snapshot it wrote at Close and now:
//
//   - the superblock says the cache was closed cleanly (state clean): the
//     writer drained, the snapshot is the index at Close, every write of
//     the session had been seen (and the pool's final write-back happened
//     before Close);
//   - the marker in the database's directory names this cache's identity
//     and the session of that superblock. Every Open of the database
//     without the cache removes the marker (Detach) before it can write a
//     page, and every Open with it writes a new session into both. So a
//     session that ran without the cache, a copy of the database taken at
//     another time, another database, or a crash of the session (the
//     superblock still says open) all show as a mismatch;
//   - the database's state (Options.DBState: Strata's last checkpoint) is
//     the one the clean superblock recorded at Close. A binary built
//     before the cache neither uses nor removes the marker: the
//     checkpoints of its session change the state. (A session of it that
//     crashed before its first checkpoint changed no page the cache can
//     hold: those of the checkpointed tree are copied on write, and the
//     pages it wrote are orphans the next Open frees, through the cache,
//     before any read of them.)
//
// When both hold, the index is rebuilt from the snapshot (time
// proportional to the entries, not to the cached bytes), each entry checked
// against the layout: in a region not marked bad, inside it and below the
// write position, a plausible size, no duplicate page. Anything else
// starts the cache cold (a new identity; the old entries are never read).
// After a crash the cache starts cold: which pages the crashed session
// wrote after its last snapshot is known to the page store's log, not to
// the cache, and the store does not export page versions (a page-version
// lookup in the store's map would let a crash keep the cache warm).
//
// Lock rules: Open and Close run alone (no other method runs concurrently
// with them on the same cache); sbMu serializes superblock writes (held
// across their I/O: nothing else takes it; infoMu guards what Stats and
// disable share). Close
// writes the snapshot in a goroutine it waits for at most CloseTimeout: on
// a stalled device that goroutine may run on after Close returned, alone
// with the file (nothing else of the cache runs then).

// Open opens (or creates) the flash file and returns the cache, warm if
// the flash file was closed cleanly by the last session of this database,
// cold otherwise. Errors are for unusable options or files (a path that
// cannot be opened, a file in use, a file that holds other data:
// ErrNotFlashCache); I/O errors on the flash file once open
// return a disabled cache (Stats says why), so the database opens anyway.
func Open(opts Options) (*Cache, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c := &Cache{opts: opts, fs: opts.FS, lay: opts.layout()}
	lock, err := c.fs.Lock(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("flashcache: lock %s: %w", opts.Path, err)
	}
	c.lock = lock
	f, err := c.fs.OpenFile(opts.Path, os.O_RDWR|os.O_CREATE, 0o644, vfs.OpenOptions{Direct: true})
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("flashcache: open %s: %w", opts.Path, err)
	}
	c.f = f
	c.ix = newIndex(c.lay.maxEntries)
	c.regions = make([]region, c.lay.regions)
	listCap := regionListCap(c.lay.maxEntries, c.lay.regions)
	for r := range c.regions {
		c.regions[r].ids = make([]uint32, 0, listCap)
	}
	c.q = newQueue(opts.QueueBytes, opts.WriteRate, max(4*opts.WriteUnit, 4<<20))
	c.filt = newFilter(c.lay.maxEntries)
	c.rd = newReaders(f, opts.Readers, c.lay.pageSize+entryHeaderSize+2*blockSize)

	start := time.Now()
	var head int
	var headOff int64
	err = c.checkOurs()
	if errors.Is(err, ErrNotFlashCache) && c.wasFormatting() {
		// A crash while this Open's predecessor formatted the file, which
		// it had found empty: what the file holds is that format's torn
		// first superblock, not another program's data. Emptied, it is
		// formatted again as a new file: its superblock before its size,
		// so that a crash now leaves what the note covers (load removes
		// the note).
		err = c.f.Truncate(0)
		if err != nil {
			err = fmt.Errorf("empty %s to format it again: %w", opts.Path, err)
		}
	}
	if errors.Is(err, ErrNotFlashCache) {
		c.rd.close()
		c.closeFiles()
		return nil, err
	}
	if err == nil {
		head, headOff, err = c.load()
	}
	c.openInfo.rebuild = time.Since(start)
	if err != nil {
		// The flash file cannot be used: run without it.
		c.w = newWriter(c, 0, 0)
		close(c.w.done)
		c.disable(err.Error())
		c.openInfo.state = "disabled"
		// The marker only: a note of a format this Open began must stay,
		// or the next Open would refuse the file it left (checkOurs).
		if derr := detach(opts.DBFS, opts.DBDir, markerName); derr != nil {
			c.rd.close()
			c.closeFiles()
			return nil, derr
		}
		return c, nil
	}
	c.w = newWriter(c, head, headOff)
	go c.w.run()
	c.active.Store(true)
	c.tracking.Store(true)
	return c, nil
}

// load reads the superblocks, decides whether the contents can be reused,
// rebuilds the index if so, and marks the file in use by a new session. It
// returns where the writer resumes.
func (c *Cache) load() (head int, headOff int64, err error) {
	size, err := c.f.Size()
	if err != nil {
		return 0, 0, fmt.Errorf("size of %s: %w", c.opts.Path, err)
	}
	if size > 0 && size < c.lay.fileSize {
		// Shorter than the cache: extended now (a device cannot be). A
		// new file is extended once its first superblock is written.
		if err := c.extend(size); err != nil {
			return 0, 0, err
		}
	}
	old, found := c.readSuperblock()
	warm := false
	switch {
	case !found && size == 0:
		c.openInfo.state = "cold: new"
	case !found:
		c.openInfo.state = "cold: no valid superblock"
	case old.lay != c.lay:
		c.openInfo.state = "cold: layout changed"
	case old.state != stateClean:
		c.openInfo.state = "cold: not closed cleanly"
	case size < c.lay.fileSize:
		c.openInfo.state = "cold: file truncated"
	default:
		why := c.checkMarker(old)
		if why == "" && (c.opts.DBState == DBState{} || old.dbState != c.opts.DBState) {
			why = "the database changed since the cache closed (or its state is unknown)"
		}
		if why != "" {
			c.openInfo.state = "cold: " + why
			break
		}
		if head, headOff, err = c.rebuild(&old); err != nil {
			c.openInfo.state = "cold: " + err.Error()
			c.resetIndex()
			break
		}
		warm = true
		c.openInfo.state = "warm"
	}
	sb := superblock{gen: old.gen + 1, lay: c.lay, state: stateOpen, session: newSession()}
	if warm {
		sb.id, sb.nextVersion = old.id, old.nextVersion
		sb.headRegion, sb.headOff = uint32(head), headOff
	} else {
		if found && old.state == stateClean {
			c.openInfo.discarded = int64(old.snapEntries)
		}
		if _, err := rand.Read(sb.id[:]); err != nil {
			return 0, 0, fmt.Errorf("identity: %w", err)
		}
		head, headOff = 0, 0
	}
	c.seed = crc32.Checksum(sb.id[:], castagnoli)
	c.version.Store(sb.nextVersion)
	if size == 0 {
		// A crash while the new file's first superblock is written may
		// leave the file created and sized but that superblock's sectors
		// unwritten or torn (zeros, old bytes), which the next Open would
		// refuse as not a flash cache (checkOurs). The database's
		// directory says, durably, that this file was found empty and is
		// being formatted, until the superblock is durable. Without the
		// note such a crash leaves a file Open refuses: worth a warning,
		// not the cache.
		if err := c.writeDBFile(formattingName, []byte(c.notePath())); err != nil {
			c.opts.Logger.Warn("flashcache: cannot note the format under way; a crash before it ends leaves a file the next Open refuses", "dir", c.opts.DBDir, "err", err)
		}
	}
	// In use from now on: a crash from here leaves state open, and the
	// next Open starts cold.
	if err := c.writeSuperblock(sb); err != nil {
		return 0, 0, err
	}
	if size == 0 {
		// Extended after its first superblock: a crash never leaves a file
		// of ours without one, which the next Open would refuse (checkOurs).
		if err := c.extend(size); err != nil {
			return 0, 0, err
		}
	}
	// A note of a format under way ends with the first durable
	// superblock, whatever path it names: a note left by a crash after
	// the format ended, or naming a path this database no longer uses,
	// would let a later Open format over whatever that path holds then.
	if err := c.removeDBFile(formattingName); err != nil {
		return 0, 0, err
	}
	if err := c.writeMarker(marker{id: sb.id, session: sb.session}); err != nil {
		// The old marker (if any) names another session: the next Open
		// starts cold. Nothing is unsafe; only persistence is lost.
		c.opts.Logger.Warn("flashcache: cannot write the marker; the cache will start cold next time", "dir", c.opts.DBDir, "err", err)
	}
	return head, headOff, nil
}

func newSession() uint64 {
	for {
		if s := mrand.Uint64(); s != 0 {
			return s
		}
	}
}

// readSuperblock returns the valid superblock slot with the highest
// generation.
func (c *Cache) readSuperblock() (superblock, bool) {
	buf := vfs.AlignedBuffer(superblockSlots * blockSize)
	if _, err := c.f.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		c.opts.Logger.Warn("flashcache: cannot read the superblocks", "path", c.opts.Path, "err", err)
		return superblock{}, false
	}
	var best superblock
	found := false
	for s := range superblockSlots {
		sb, err := decodeSuperblock(buf[s*blockSize : (s+1)*blockSize])
		if err == nil && (!found || sb.gen > best.gen) {
			best, found = sb, true
		}
	}
	return best, found
}

// extend makes the file the cache's size, durably, with its directory
// entry.
func (c *Cache) extend(size int64) error {
	if err := c.f.Truncate(c.lay.fileSize); err != nil {
		return fmt.Errorf("extend %s from %d to %d bytes (a block device must hold the cache's Size): %w", c.opts.Path, size, c.lay.fileSize, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", c.opts.Path, err)
	}
	if err := c.fs.SyncDir(filepath.Dir(c.opts.Path)); err != nil {
		return fmt.Errorf("sync the directory of %s: %w", c.opts.Path, err)
	}
	return nil
}

// ErrNotFlashCache: Path names a file or device that holds other data.
var ErrNotFlashCache = errors.New("flashcache: not a Strata flash cache")

// checkOurs refuses a file or device that is neither empty nor a flash
// cache (a superblock slot that starts with the cache's magic, valid or
// torn: Open writes a new file's first superblock before anything else),
// unless Options.Format allows it to be formatted over. Open formats a
// cache it cannot reuse, so without this a mistyped Path (a database's
// segment file, a partition) was overwritten; zeros at the start prove
// nothing (a partition's or an image's first KiB often are).
func (c *Cache) checkOurs() error {
	size, err := c.f.Size()
	if err != nil {
		return fmt.Errorf("size of %s: %w", c.opts.Path, err)
	}
	if size == 0 || c.opts.Format {
		return nil
	}
	buf := vfs.AlignedBuffer(superblockSlots * blockSize)
	n, err := c.f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the superblocks of %s: %w", c.opts.Path, err)
	}
	for s := 0; s*blockSize < n; s++ {
		if bytes.HasPrefix(buf[s*blockSize:n], superMagic[:]) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not empty and holds no flash cache; remove it, choose another path, or set Format to overwrite it (strata serve --flash-cache-format)",
		ErrNotFlashCache, c.opts.Path)
}

// writeSuperblock writes sb into the slot of its generation and syncs.
func (c *Cache) writeSuperblock(sb superblock) error {
	c.sbMu.Lock()
	defer c.sbMu.Unlock()
	buf := vfs.AlignedBuffer(blockSize)
	sb.encode(buf)
	if _, err := c.f.WriteAt(buf, int64(sb.gen%superblockSlots)*blockSize); err != nil {
		return fmt.Errorf("write superblock: %w", err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("sync superblock: %w", err)
	}
	c.sb = sb
	return nil
}

// checkMarker returns why the marker does not vouch for sb ("" if it
// does).
func (c *Cache) checkMarker(sb superblock) string {
	if c.opts.DBFS == nil || c.opts.DBDir == "" {
		return "no database directory to check"
	}
	b, err := readFile(c.opts.DBFS, filepath.Join(c.opts.DBDir, markerName))
	if errors.Is(err, fs.ErrNotExist) {
		return "no marker (the database was opened without the cache, or never with it)"
	}
	if err != nil {
		return "cannot read the marker: " + err.Error()
	}
	m, err := decodeMarker(b)
	switch {
	case err != nil:
		return "bad marker"
	case m.id != sb.id:
		return "the flash file belongs to another database"
	case m.session != sb.session:
		return "the database was used by another session since (or is a copy)"
	}
	return ""
}

// rebuild loads the snapshot of a cleanly closed cache into the index.
func (c *Cache) rebuild(sb *superblock) (head int, headOff int64, err error) {
	buf := vfs.AlignedBuffer(int((sb.snapLen + blockSize - 1) &^ (blockSize - 1)))
	if _, err := c.f.ReadAt(buf, c.lay.snapOff); err != nil {
		return 0, 0, fmt.Errorf("read snapshot: %w", err)
	}
	bad, entries, err := decodeSnapshot(buf, sb)
	if err != nil {
		return 0, 0, err
	}
	head, headOff = int(sb.headRegion), sb.headOff
	for r, isBad := range bad {
		if isBad {
			c.regions[r].bad.Store(true)
			c.regions[r].purged = true
			c.st.badRegions.Add(1)
		}
	}
	if c.regions[head].bad.Load() {
		headOff = c.lay.regionSize // move on at the first write
	}
	listCap := regionListCap(c.lay.maxEntries, c.lay.regions)
	for _, e := range entries {
		off := c.off(e.loc)
		end := off + entryHeaderSize + int64(e.size)
		if e.size == 0 || int(e.size) > c.lay.pageSize || off < c.lay.dataStart || off%c.lay.unit != 0 {
			c.openInfo.discarded++
			continue
		}
		r := c.lay.regionOf(off)
		limit := c.lay.regionBase(r) + c.lay.regionSize
		if r == head {
			limit = c.lay.regionBase(r) + headOff
		}
		if r >= c.lay.regions || bad[r] || end > limit || len(c.regions[r].ids) >= listCap {
			c.openInfo.discarded++
			continue
		}
		if !c.ix.add(slot{id: e.id, version: e.version, loc: e.loc, size: e.size}) {
			c.openInfo.discarded++
			continue
		}
		c.regions[r].ids = append(c.regions[r].ids, e.id)
		c.openInfo.rebuilt++
	}
	return head, headOff, nil
}

// resetIndex empties the index and the regions after a failed rebuild.
func (c *Cache) resetIndex() {
	c.ix = newIndex(c.lay.maxEntries)
	for r := range c.regions {
		reg := &c.regions[r]
		reg.ids = reg.ids[:0]
		reg.bad.Store(false)
		reg.purged = false
	}
	c.st.badRegions.Store(0)
	c.openInfo.rebuilt = 0
}

// Close stops the cache. With clean (the database wrote back every page
// and synced its store before, and its pages are in state, which is not
// zero), it drains the queue, writes the index snapshot and marks the file
// cleanly closed in that state, so the next Open in the same state is
// warm; otherwise (or if any of that fails) the next Open starts cold. A flash
// device that does not answer does not hold Close up: it waits at most
// CloseTimeout for the writer, and as long again for the snapshot, then
// returns and leaves the file open to the stuck goroutine (the next Open
// starts cold, unless that goroutine finished the snapshot: then the file
// was closed cleanly). It returns only errors closing the file.
func (c *Cache) Close(clean bool, state DBState) error {
	if c.closed.Swap(true) {
		return nil
	}
	c.active.Store(false)
	stopped := c.w.stopAndWait(c.opts.CloseTimeout)
	c.rd.close()
	if !stopped {
		// The writer is stuck on the device: leave the file open to it.
		c.opts.Logger.Warn("flashcache: the flash does not answer; closing without the index, the cache will start cold next time", "path", c.opts.Path)
		return c.lock.Close()
	}
	if clean && state != (DBState{}) && c.tracking.Load() && !c.failed.Load() {
		done := make(chan error, 1)
		go func() { done <- c.persist(state) }()
		timer := time.NewTimer(c.opts.CloseTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			if err != nil {
				c.opts.Logger.Warn("flashcache: cannot persist the index; the cache will start cold next time", "path", c.opts.Path, "err", err)
			}
		case <-timer.C:
			// Stuck writing the snapshot: the superblock still says open
			// (unless the write finishes later, and then it is right).
			c.opts.Logger.Warn("flashcache: the flash does not answer; closing without the index", "path", c.opts.Path)
			return c.lock.Close()
		}
	}
	return c.closeFiles()
}

func (c *Cache) closeFiles() error {
	err := c.f.Close()
	if lerr := c.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// persist writes the snapshot and the clean superblock. It runs alone
// (the writer has stopped), perhaps on after Close gave up waiting for it.
func (c *Cache) persist(state DBState) error {
	var entries []snapEntry
	c.ix.each(func(e slot) {
		entries = append(entries, snapEntry{id: e.id, version: e.version, size: e.size, loc: e.loc})
	})
	mapLen := badMapBytes(c.lay.regions)
	n := snapshotHeader + mapLen + len(entries)*snapshotEntrySize
	if len(entries) > c.lay.maxEntries || int64(n) > c.lay.snapCap {
		// The index keeps to its capacity (index.take); a snapshot beyond
		// its area would overwrite the first region's data.
		return fmt.Errorf("snapshot of %d entries does not fit its area (%d entries, %d bytes)", len(entries), c.lay.maxEntries, c.lay.snapCap)
	}
	buf := vfs.AlignedBuffer(n)
	bad := make([]bool, c.lay.regions)
	for r := range bad {
		bad[r] = c.regions[r].bad.Load()
	}
	encodeSnapshotHeader(buf, uint64(len(entries)), c.lay.regions, bad)
	p := buf[snapshotHeader+mapLen:]
	for i, e := range entries {
		encodeSnapEntry(p[i*snapshotEntrySize:], e)
	}
	if _, err := c.f.WriteAt(buf, c.lay.snapOff); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	// The regions' data and the snapshot are durable before the
	// superblock says clean.
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	c.sbMu.Lock()
	sb := c.sb
	c.sbMu.Unlock()
	sb.gen++
	sb.state = stateClean
	sb.dbState = state
	sb.nextVersion = c.version.Load()
	sb.headRegion, sb.headOff = uint32(c.w.head), c.w.bufStart
	sb.snapEntries, sb.snapLen = uint64(len(entries)), uint64(n)
	sb.snapCRC = crc32.Checksum(buf[:n], castagnoli)
	return c.writeSuperblock(sb)
}

// writeMarker replaces the marker in the database's directory durably.
func (c *Cache) writeMarker(m marker) error { return c.writeDBFile(markerName, m.encode()) }

// wasFormatting reports whether the database's directory says that an
// earlier Open found the flash file at this Path empty and did not finish
// formatting it, and the file looks like that: no longer than the
// superblock slots (the format extends the file only once its superblock
// is durable, and then checkOurs takes it).
func (c *Cache) wasFormatting() bool {
	if c.opts.DBFS == nil || c.opts.DBDir == "" {
		return false
	}
	if size, err := c.f.Size(); err != nil || size > superblockSlots*blockSize {
		return false
	}
	b, err := readFile(c.opts.DBFS, filepath.Join(c.opts.DBDir, formattingName))
	return err == nil && string(b) == c.notePath()
}

// notePath is the flash file's path as the formatting note names it:
// absolute, so that a relative Path opened from another directory does not
// match.
func (c *Cache) notePath() string {
	if abs, err := filepath.Abs(c.opts.Path); err == nil {
		return abs
	}
	return c.opts.Path
}

// removeDBFile removes the cache's file name from the database's
// directory, durably; a missing file is not an error (and costs no sync).
func (c *Cache) removeDBFile(name string) error {
	if c.opts.DBFS == nil || c.opts.DBDir == "" {
		return nil
	}
	p := filepath.Join(c.opts.DBDir, name)
	if _, err := c.opts.DBFS.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := c.opts.DBFS.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	if err := c.opts.DBFS.SyncDir(c.opts.DBDir); err != nil {
		return fmt.Errorf("sync %s: %w", c.opts.DBDir, err)
	}
	return nil
}

// writeDBFile replaces the cache's file name in the database's directory
// with data, durably (a temporary file, synced, renamed, the directory
// synced).
func (c *Cache) writeDBFile(name string, data []byte) error {
	if c.opts.DBFS == nil || c.opts.DBDir == "" {
		return nil
	}
	dbfs, dir := c.opts.DBFS, c.opts.DBDir
	tmp := filepath.Join(dir, name+".tmp")
	f, err := dbfs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644, vfs.OpenOptions{})
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err = f.WriteAt(data, 0); err != nil {
		err = fmt.Errorf("write %s: %w", tmp, err)
	} else if err = f.Sync(); err != nil {
		err = fmt.Errorf("sync %s: %w", tmp, err)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", tmp, cerr)
	}
	if err != nil {
		return err
	}
	if err := dbfs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err := dbfs.SyncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Detach removes the cache's marker (and a note of a format that did not
// finish) from the database's directory, so no flash file is trusted
// afterwards: the database calls it when it opens
// without a flash cache, before it writes any page. It does nothing if
// there is no marker.
func Detach(dbfs vfs.FS, dir string) error {
	// The formatting note too: it would let a later cache at its path
	// format over whatever the path holds then.
	return detach(dbfs, dir, markerName, formattingName)
}

// detach removes the named files of the cache from the database's
// directory, durably.
func detach(dbfs vfs.FS, dir string, names ...string) error {
	if dbfs == nil || dir == "" {
		return nil
	}
	removed := false
	for _, n := range names {
		name := filepath.Join(dir, n)
		if _, err := dbfs.Stat(name); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := dbfs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("flashcache: remove %s: %w", name, err)
		}
		removed = true
	}
	if !removed {
		return nil
	}
	if err := dbfs.SyncDir(dir); err != nil {
		return fmt.Errorf("flashcache: sync %s: %w", dir, err)
	}
	return nil
}

// IsMarker reports whether name is a file the cache keeps in the
// database's directory (for tools that list a database's files).
func IsMarker(name string) bool {
	switch name {
	case markerName, markerName + ".tmp", formattingName, formattingName + ".tmp":
		return true
	}
	return false
}

func readFile(dbfs vfs.FS, name string) ([]byte, error) {
	f, err := dbfs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	if n > 4096 {
		return nil, formatErr("marker of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}
