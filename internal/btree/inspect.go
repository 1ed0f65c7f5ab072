package btree

// Inspection of single pages, for `strata check`: it decodes a page's
// bytes into what a tree walk needs to verify the tree's invariants. It
// reads nothing from the pool and changes nothing.

import "encoding/binary"

// Page kinds, as InspectPage reports them.
const (
	KindLeaf     = kindLeaf
	KindBranch   = kindBranch
	KindOverflow = kindOverflow
)

// ValueRef is a leaf value as stored: inline, or the first page of its
// overflow chain.
type ValueRef struct {
	Overflow bool
	Length   int
	First    PageID // overflow only
}

// PageInfo is an inspected node or overflow page. Keys alias the page.
type PageInfo struct {
	Kind uint8
	TxID uint64
	// Nodes.
	Keys     [][]byte
	Children []PageID   // branch: len(Keys)+1, child i holds keys in [Keys[i-1], Keys[i])
	Values   []ValueRef // leaf: one per key
	// Overflow pages.
	Used int
	Next PageID
}

// InspectPage verifies that page is a well-formed node or overflow page
// (VerifyPage) and decodes it.
func InspectPage(id PageID, page []byte) (PageInfo, error) {
	if err := VerifyPage(id, page); err != nil {
		return PageInfo{}, err
	}
	if page[0] == kindOverflow {
		return PageInfo{Kind: kindOverflow, TxID: binary.LittleEndian.Uint64(page[16:]),
			Used: int(binary.LittleEndian.Uint32(page[4:])), Next: PageID(binary.LittleEndian.Uint64(page[8:]))}, nil
	}
	n := node(page)
	info := PageInfo{Kind: n.kind(), TxID: n.txid()}
	for i := 0; i < n.count(); i++ {
		info.Keys = append(info.Keys, n.key(i))
		if n.kind() == kindLeaf {
			v, overflow, length := n.value(i)
			ref := ValueRef{Overflow: overflow, Length: length}
			if overflow {
				ref.First = PageID(binary.LittleEndian.Uint64(v))
			}
			info.Values = append(info.Values, ref)
		}
	}
	if n.kind() == kindBranch {
		for i := 0; i <= n.count(); i++ {
			info.Children = append(info.Children, PageID(n.child(i)))
		}
	}
	return info, nil
}

// OverflowCapacity is the value bytes one overflow page of pageSize holds.
func OverflowCapacity(pageSize int) int { return pageSize - overflowHeaderSize }

// MaxKeySizeFor is the key limit of a tree of pageSize pages.
func MaxKeySizeFor(pageSize int) int { return pageSize/4 - 16 }

// MaxInlineValueSizeFor is the longest value a leaf of pageSize pages
// stores inline.
func MaxInlineValueSizeFor(pageSize int) int { return pageSize/4 - 16 }
