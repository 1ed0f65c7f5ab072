package pagestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/codec"
	"github.com/stratadb/strata/internal/vfs"
)

// Compression dictionaries.
//
// A store trains one Zstandard dictionary on the first pages written to
// it, and keeps it only if it pays (rejectDict): compressed with it, the
// held-out half of the sample must take at least DictionaryGain less space
// than without, and get smaller by more than it gets slower to decode
// (JSON documents in 4 KiB pages: kept; in 16 KiB pages, and random
// digits: not).
// Once kept, the dictionary is written to its own file and synced before
// any page is compressed with it, so that a record never names a
// dictionary a crash could lose; every page compressed from then on, by
// the store or by the buffer pool (WithDictionary), uses it. Pages written
// before keep their plain images until they are rewritten.
//
// Dictionary file DICT-<n> (little endian), see docs/FORMAT.md:
//
//	0  magic   [8]byte "STRATDCT"
//	8  version uint32  1
//	12 length  uint32  n, the dictionary's size
//	16 dict    [n]byte Zstandard dictionary format (its ID is in it)
//	.. crc     uint32  CRC32C of every byte before it
//
// The highest-numbered DICT file compresses new pages.
//
// Every DICT file is registered with the codec package at Open (so that
// the buffer pool and the flash cache decode its pages), and its ID is
// recorded as the store's: a record naming any other dictionary is
// corrupt, even if another store in the process has registered it.
//
// Locks: dictMu guards the sample and the verdict; it is a leaf, taken on
// the write path only while a sample is being collected (dict.sampling).
// installDict holds ckptMu (then mu, shared, briefly) across the DICT
// file's I/O, so that Close, which takes ckptMu before it marks the store
// closed, never returns while a dictionary is being written. The active
// dictionary and the store's dictionary IDs are read through atomic
// pointers.
const (
	dictFilePrefix  = "DICT-"
	dictTmpSuffix   = ".tmp"
	dictHeaderSize  = 16
	dictFileVersion = 1
	// DefaultDictionarySample is the raw page bytes sampled to train and
	// judge a dictionary: half train it, half measure it.
	DefaultDictionarySample = 1 << 20
	// DefaultDictionaryGain is the least a dictionary must save on the
	// held-out pages to be kept.
	DefaultDictionaryGain = 0.10
	// dictTrainLevel is the zstd level the dictionary is judged at: the
	// buffer pool's write-back and demotion level.
	dictTrainLevel = 1
)

var dictMagic = [8]byte{'S', 'T', 'R', 'A', 'T', 'D', 'C', 'T'}

// dictState is the store's dictionary state (Store.dict).
type dictState struct {
	// cur is what new pages are compressed with; nil: no dictionary.
	cur atomic.Pointer[dictCodecs]
	// ids are the dictionaries of this store's DICT files, loaded or
	// installed: a record naming another is corrupt, even if another
	// store in the process registered that dictionary.
	ids atomic.Pointer[map[uint32]bool]
	// nextNum is the number of the next DICT file; set at Open, then
	// guarded by ckptMu (installDict).
	nextNum uint32

	sampling atomic.Bool // collecting samples; read without dictMu on the write path
	// Guarded by Store.dictMu.
	samples map[PageID][]byte // the newest version of each page sampled
	verdict string
}

// dictCodecs is an active dictionary and its codecs by zstd level,
// published together.
type dictCodecs struct {
	dict   *codec.Dict
	codecs map[int]codec.Codec
}

// parseDictFileName returns n for "DICT-n".
func parseDictFileName(name string) (uint32, bool) {
	s, ok := strings.CutPrefix(name, dictFilePrefix)
	if !ok || strings.HasSuffix(s, dictTmpSuffix) {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || dictFileName(uint32(n)) != name {
		return 0, false
	}
	return uint32(n), true
}

func dictFileName(n uint32) string { return fmt.Sprintf("%s%06d", dictFilePrefix, n) }

// encodeDictFile returns the DICT file holding raw.
func encodeDictFile(raw []byte) []byte {
	b := make([]byte, dictHeaderSize+len(raw)+4)
	copy(b, dictMagic[:])
	binary.LittleEndian.PutUint32(b[8:], dictFileVersion)
	binary.LittleEndian.PutUint32(b[12:], uint32(len(raw)))
	copy(b[dictHeaderSize:], raw)
	binary.LittleEndian.PutUint32(b[dictHeaderSize+len(raw):], crc32.Checksum(b[:dictHeaderSize+len(raw)], castagnoli))
	return b
}

// decodeDictFile returns the dictionary a DICT file holds.
func decodeDictFile(b []byte) ([]byte, error) {
	if len(b) < dictHeaderSize+4 {
		return nil, errors.New("short dictionary file")
	}
	if [8]byte(b[:8]) != dictMagic {
		return nil, errors.New("bad dictionary file magic")
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != dictFileVersion {
		return nil, fmt.Errorf("dictionary file version %d, want %d", v, dictFileVersion)
	}
	n := binary.LittleEndian.Uint32(b[12:])
	if n > codec.MaxDictSize || int(n) != len(b)-dictHeaderSize-4 {
		return nil, fmt.Errorf("dictionary length %d in a file of %d bytes", n, len(b))
	}
	if got, want := crc32.Checksum(b[:len(b)-4], castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, fmt.Errorf("dictionary file checksum %#x, want %#x", got, want)
	}
	return b[dictHeaderSize : len(b)-4], nil
}

// loadDicts registers the store's dictionaries (at Open, before recovery
// reads any page) and removes a temporary file a crash left. The
// highest-numbered dictionary becomes the active one unless dictionaries
// are disabled; without one, sampling starts.
func (s *Store) loadDicts() error {
	names, err := s.fs.List(s.dir)
	if err != nil {
		return fmt.Errorf("pagestore: list %s: %w", s.dir, err)
	}
	var nums []uint32
	for _, name := range names {
		if strings.HasPrefix(name, dictFilePrefix) && strings.HasSuffix(name, dictTmpSuffix) {
			_ = s.fs.Remove(filepath.Join(s.dir, name))
			continue
		}
		if n, ok := parseDictFileName(name); ok {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	var last *codec.Dict
	for _, n := range nums {
		d, err := readDictFile(s.fs, filepath.Join(s.dir, dictFileName(n)))
		if err != nil {
			return err
		}
		s.addDictID(d.ID())
		last = d
		s.dict.nextNum = n + 1
	}
	if s.dict.nextNum == 0 {
		s.dict.nextNum = 1
	}
	if s.opts.DisableDictionary {
		s.dict.verdict = "disabled"
		return nil
	}
	if last != nil && s.codec.ID() == codec.Zstd {
		return s.activateDict(last)
	}
	if s.codec.ID() == codec.Zstd {
		s.dict.sampling.Store(true)
	}
	return nil
}

// readDictFile reads, verifies and registers one DICT file.
func readDictFile(fs vfs.FS, name string) (*codec.Dict, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0, vfs.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("pagestore: open dictionary: %w", err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("pagestore: dictionary %s: %w", name, err)
	}
	if size > dictHeaderSize+codec.MaxDictSize+4 {
		return nil, fmt.Errorf("pagestore: dictionary %s: %w: size %d too large", name, ErrCorrupt, size)
	}
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("pagestore: read dictionary %s: %w", name, err)
	}
	raw, err := decodeDictFile(b)
	if err != nil {
		return nil, fmt.Errorf("pagestore: dictionary %s: %w: %v", name, ErrCorrupt, err)
	}
	d, err := codec.RegisterDict(raw)
	if errors.Is(err, codec.ErrCorrupt) {
		return nil, fmt.Errorf("pagestore: dictionary %s: %w: %v", name, ErrCorrupt, err)
	}
	if err != nil {
		return nil, fmt.Errorf("pagestore: dictionary %s: %w", name, err)
	}
	return d, nil
}

// addDictID adds id to the store's dictionaries (at Open, or by
// installDict under ckptMu: never concurrently).
func (s *Store) addDictID(id uint32) {
	m := map[uint32]bool{id: true}
	if p := s.dict.ids.Load(); p != nil {
		for k := range *p {
			m[k] = true
		}
	}
	s.dict.ids.Store(&m)
}

// checkDictRecord verifies that a ZstdDict record's payload names one of
// the store's own dictionaries.
func (s *Store) checkDictRecord(payload []byte) error {
	id, err := codec.FrameDict(payload)
	if err != nil {
		return err
	}
	if p := s.dict.ids.Load(); p == nil || !(*p)[id] {
		return fmt.Errorf("page compressed with dictionary %08x, which the store has no DICT file for", id)
	}
	return nil
}

// activateDict makes d the dictionary new pages are compressed with.
func (s *Store) activateDict(d *codec.Dict) error {
	m := make(map[int]codec.Codec)
	for _, level := range []int{s.codec.Level(), dictTrainLevel} {
		if _, ok := m[level]; ok {
			continue
		}
		base, err := codec.New(codec.Zstd, level)
		if err != nil {
			return err
		}
		if m[level], err = codec.WithDict(base, d); err != nil {
			return err
		}
	}
	s.dict.cur.Store(&dictCodecs{dict: d, codecs: m})
	s.dict.sampling.Store(false)
	return nil
}

// WithDictionary returns the codec to compress with in place of c: c with
// the store's dictionary if the store has one and c is a Zstd codec, c
// itself otherwise. The buffer pool compresses its demotions with it.
func (s *Store) WithDictionary(c codec.Codec) codec.Codec {
	if c.ID() != codec.Zstd {
		return c
	}
	cur := s.dict.cur.Load()
	if cur == nil {
		return c
	}
	if dc, ok := cur.codecs[c.Level()]; ok {
		return dc
	}
	// Levels other than the store's and the pool's are rare (tests): the
	// dictionary keeps their encoders, only the small wrapper is made
	// again.
	dc, err := codec.WithDict(c, cur.dict)
	if err != nil {
		return c
	}
	return dc
}

// DictionaryMemory is the heap the store's dictionary costs when the
// buffer pool compresses with c (codec.Dict.Memory), 0 without one.
func (s *Store) DictionaryMemory(c codec.Codec) int64 {
	cur := s.dict.cur.Load()
	if cur == nil {
		return 0
	}
	return cur.dict.Memory(c.Level())
}

// Dictionary returns the ID of the dictionary new pages are compressed
// with (0: none) and what became of the store's attempt to train one.
func (s *Store) Dictionary() (id uint32, verdict string) {
	s.dictMu.Lock()
	defer s.dictMu.Unlock()
	if cur := s.dict.cur.Load(); cur != nil {
		id = cur.dict.ID()
	}
	return id, s.dict.verdict
}

// sampleForDict keeps a copy of page for training while the sample is not
// full, and trains once it is, on this write. It is called on the write
// path; it costs an atomic load once sampling is over.
func (s *Store) sampleForDict(id PageID, page []byte) {
	if !s.dict.sampling.Load() {
		return
	}
	if samples := s.addSample(id, page); samples != nil {
		// Trained here, on the write that filled the sample, rather than
		// in a goroutine: once per store, tens of milliseconds, and the
		// store's file operations stay in a deterministic order (crash
		// tests count them).
		s.trainDict(samples)
	}
}

// addSample keeps a copy of page as page id's sample (replacing an older
// version's) and returns the whole sample, ending sampling, once it holds
// DictionarySample bytes of distinct pages.
func (s *Store) addSample(id PageID, page []byte) map[PageID][]byte {
	s.dictMu.Lock()
	defer s.dictMu.Unlock()
	if !s.dict.sampling.Load() {
		return nil
	}
	if s.dict.samples == nil {
		s.dict.samples = make(map[PageID][]byte)
	}
	s.dict.samples[id] = append(s.dict.samples[id][:0], page...)
	if len(s.dict.samples)*len(page) < s.opts.DictionarySample {
		return nil
	}
	s.dict.sampling.Store(false)
	samples := s.dict.samples
	s.dict.samples = nil
	return samples
}

// trainDict trains a dictionary on the even samples, judges it on the odd
// ones, and keeps it if it saves at least DictionaryGain there.
func (s *Store) trainDict(samples map[PageID][]byte) {
	verdict, err := s.tryDict(samples)
	if err != nil {
		verdict = "failed: " + err.Error()
		s.log.Warn("pagestore: dictionary not adopted", "dir", s.dir, "err", err)
	}
	s.dictMu.Lock()
	s.dict.verdict = verdict
	s.dictMu.Unlock()
}

func (s *Store) tryDict(samples map[PageID][]byte) (string, error) {
	// Pages are split by id, so no page is both trained on and judged.
	ids := slices.Sorted(maps.Keys(samples))
	var train, judge [][]byte
	for _, id := range ids {
		if id%2 == 0 {
			train = append(train, samples[id])
		} else {
			judge = append(judge, samples[id])
		}
	}
	if len(train) == 0 || len(judge) == 0 {
		return "not enough samples", nil
	}
	// The seed, and so the dictionary's ID, follow from the samples: the
	// same pages train the same dictionary, and two stores in one process
	// with different pages draw different IDs (codec.RegisterDict).
	h := fnv.New64a()
	for _, p := range train {
		h.Write(p)
	}
	start := time.Now()
	seed := h.Sum64()
	raw, err := codec.TrainDict(train, 0, 0, seed)
	if err != nil {
		return "", err
	}
	trial, verdict, err := judgeDict("dictionary", raw, judge, start)
	if err != nil {
		return "", err
	}
	if s.opts.DictionarySpaceOnly {
		trial.DictDecode = trial.PlainDecode
	}
	reason := rejectDict(trial, s.opts.DictionaryGain)
	if reason == "" {
		return s.adoptDict(raw, trial, verdict)
	}
	verdict = "rejected (" + reason + "): " + verdict
	if s.opts.DictionarySpaceOnly {
		// A table dictionary saves no space; judged by space alone it
		// could only be rejected.
		return verdict, nil
	}
	// Pages its history does not shrink may still decode faster with the
	// store's literal table alone (a table dictionary, codec/literals.go).
	start = time.Now()
	raw, err = codec.TrainTableDict(train, 0, seed^tableDictSeed)
	if err != nil {
		return verdict + "; table dictionary not trained: " + err.Error(), nil
	}
	trial, tverdict, err := judgeDict("table dictionary", raw, judge, start)
	if err != nil {
		return "", err
	}
	judgeTable := rejectTableDict
	if s.tableDictJudge != nil {
		judgeTable = s.tableDictJudge
	}
	if reason := judgeTable(trial); reason != "" {
		return verdict + "; table dictionary rejected (" + reason + "): " + tverdict, nil
	}
	return s.adoptDict(raw, trial, tverdict+"; "+verdict)
}

// tableDictSeed is mixed into the sample's seed to draw a table
// dictionary's ID, so that it differs from the rejected dictionary's.
const tableDictSeed = 0x7ab1e

// judgeDict compresses the held-out pages with raw, a dictionary of a kind
// ("dictionary", "table dictionary"), and says what it does.
func judgeDict(kind string, raw []byte, judge [][]byte, start time.Time) (codec.DictTrial, string, error) {
	trial, err := codec.DictGain(raw, dictTrainLevel, judge)
	if err != nil {
		return trial, "", err
	}
	id, err := codec.DictID(raw)
	if err != nil {
		return trial, "", err
	}
	return trial, fmt.Sprintf("%s %08x: held-out pages %d → %d bytes with it (%.1f%% smaller, %.2f× as many in a cache), decoded in %.2f× the time; trained and judged in %v",
		kind, id, trial.PlainBytes, trial.DictBytes, 100*(1-1/trial.SizeRatio()), trial.SizeRatio(), trial.DecodeRatio(), time.Since(start).Round(time.Millisecond)), nil
}

// adoptDict registers raw, writes it and makes it the active dictionary.
func (s *Store) adoptDict(raw []byte, trial codec.DictTrial, verdict string) (string, error) {
	// Register before the file is written (a dictionary RegisterDict
	// refuses is never written), activate after it is durable.
	d, err := codec.RegisterDict(raw)
	if err != nil {
		return "", err
	}
	if err := s.installDict(raw, d); err != nil {
		return "", err
	}
	s.log.Info("pagestore: dictionary adopted", "dir", s.dir, "id", fmt.Sprintf("%08x", d.ID()), "table", d.Table(),
		"size_ratio", trial.SizeRatio(), "decode_ratio", trial.DecodeRatio())
	return "adopted: " + verdict, nil
}

// rejectDict says why a dictionary with this trial is not worth keeping,
// or "" if it is: it must save at least minGain of the space, and make the
// pages smaller by more than it makes their decoding slower. Decoding with
// a dictionary runs zstd's Go sequence executor, not its assembly one,
// which costs more the larger the page: JSON events at 16 KiB came out
// 1.23× smaller but took 1.6× the time to decode, and measured slower with
// the dictionary at 1–2× the memory and no faster at 4–8× (docs/BENCHMARKS.md,
// "Zstandard dictionaries"); at 4 KiB, 1.56× smaller for 1.2–1.4× the time,
// and faster from 1.5× the memory on. (Those figures predate the literal
// table, which takes a fifth to a third off the decoding time.)
func rejectDict(t codec.DictTrial, minGain float64) string {
	switch {
	case 1-1/t.SizeRatio() < minGain:
		return "too little gain"
	case t.SizeRatio() < t.DecodeRatio():
		return "decoding costs more than the space saves"
	}
	return ""
}

// Limits for keeping a table dictionary (rejectTableDict).
const (
	// tableDictMaxDecode is the largest share of the plain decoding time
	// a table dictionary's pages may take: sysbench rows decode in 0.65×,
	// JSON events in 0.75× (docs/BENCHMARKS.md, "A store-wide literal
	// table").
	tableDictMaxDecode = 0.9
	// tableDictMinSize is the least SizeRatio a table dictionary may
	// have: its table codes some pages' literals a little longer than
	// their own would (it is used where that costs at most 1/32).
	tableDictMinSize = 0.98
)

// rejectTableDict says why a table dictionary with this trial is not worth
// keeping, or "" if it is: it must make decoding at least a tenth faster
// and the pages at most 2% larger.
func rejectTableDict(t codec.DictTrial) string {
	switch {
	case t.DecodeRatio() > tableDictMaxDecode:
		return "decodes too little faster"
	case t.SizeRatio() < tableDictMinSize:
		return "pages too much larger"
	}
	return ""
}

// installDict writes raw as the next DICT file: a temporary file, synced,
// renamed, and the directory synced, so that the file is durable before
// any record names its dictionary; then it makes d the active dictionary.
// It holds ckptMu, which Close takes before it marks the store closed, so
// it never writes into the directory of a closed store; it fails if the
// store is closing.
func (s *Store) installDict(raw []byte, d *codec.Dict) error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	s.mu.RLock()
	closing := s.closed || s.closing
	s.mu.RUnlock()
	if closing {
		return ErrClosed
	}
	name := filepath.Join(s.dir, dictFileName(s.dict.nextNum))
	tmp := name + dictTmpSuffix
	f, err := s.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644, vfs.OpenOptions{})
	if err != nil {
		return fmt.Errorf("pagestore: create dictionary: %w", err)
	}
	if _, err := f.WriteAt(encodeDictFile(raw), 0); err != nil {
		f.Close()
		return fmt.Errorf("pagestore: write dictionary %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("pagestore: sync dictionary %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pagestore: close dictionary %s: %w", tmp, err)
	}
	if err := s.fs.Rename(tmp, name); err != nil {
		return fmt.Errorf("pagestore: install dictionary: %w", err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return fmt.Errorf("pagestore: sync directory %s: %w", s.dir, err)
	}
	s.dict.nextNum++
	s.addDictID(d.ID())
	return s.activateDict(d)
}
