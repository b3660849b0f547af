package toolregistry

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
)

// Attachment refers to bytes kept in the registry's [Attachments] store. The model sees it
// as "[image: image/png, 1234 bytes, id att_3]", never as base64.
//
// An Attachment is a plain value, safe to copy and share.
type Attachment struct {
	ID        string `json:"id"`
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
}

// String renders the attachment the way the model sees it.
func (a Attachment) String() string {
	return "[image: " + a.MediaType + ", " + strconv.Itoa(a.Size) + " bytes, id " + a.ID + "]"
}

// Attachments stores the bytes of images (and other binary content) that results refer to,
// within a total size limit (attachmentMaxBytes). When a new attachment does not fit, the
// oldest ones are evicted until it does: the store favours the current conversation, and a
// result that refers to an evicted attachment can no longer be resolved (Get reports false).
// An attachment larger than the whole limit is refused with [ErrAttachmentTooLarge].
//
// Attachments is safe for concurrent use.
type Attachments struct {
	mu    sync.Mutex
	max   int64
	used  int64
	seq   uint64
	items map[string]stored
	order []string // ids, oldest first
}

type stored struct {
	data      []byte
	mediaType string
}

func newAttachments(max int64) *Attachments {
	return &Attachments{max: max, items: make(map[string]stored)}
}

// Attachments returns the registry's attachment store.
func (r *Registry) Attachments() *Attachments { return r.store }

// Put stores a copy of data with its media type (for example "image/png") and returns the
// attachment to put in an [Image] block. It evicts the oldest attachments to make room.
func (a *Attachments) Put(mediaType string, data []byte) (Attachment, error) {
	if mediaType == "" {
		return Attachment{}, fmt.Errorf("toolregistry: attachment without a media type")
	}
	size := int64(len(data))
	a.mu.Lock()
	defer a.mu.Unlock()
	if size > a.max {
		return Attachment{}, fmt.Errorf("%w: %d bytes, the store holds at most %d", ErrAttachmentTooLarge, size, a.max)
	}
	a.evictLocked(a.max - size)
	a.seq++
	id := "att_" + strconv.FormatUint(a.seq, 10)
	a.items[id] = stored{data: slices.Clone(data), mediaType: mediaType}
	a.order = append(a.order, id)
	a.used += size
	return Attachment{ID: id, MediaType: mediaType, Size: len(data)}, nil
}

// Get returns the bytes and media type of the attachment id. The bytes must not be
// modified. ok is false for an unknown or evicted id.
func (a *Attachments) Get(id string) (data []byte, mediaType string, ok bool) {
	a.mu.Lock()
	s, ok := a.items[id]
	a.mu.Unlock()
	return s.data, s.mediaType, ok
}

// Size returns the number of bytes stored.
func (a *Attachments) Size() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// Len returns the number of attachments stored.
func (a *Attachments) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.items)
}

// evictLocked drops the oldest attachments until at most limit bytes are used.
func (a *Attachments) evictLocked(limit int64) {
	n := 0
	for a.used > limit && n < len(a.order) {
		id := a.order[n]
		a.used -= int64(len(a.items[id].data))
		delete(a.items, id)
		n++
	}
	if n > 0 {
		a.order = slices.Delete(a.order, 0, n)
	}
}

func (a *Attachments) setMax(max int64) {
	a.mu.Lock()
	a.max = max
	a.evictLocked(max)
	a.mu.Unlock()
}
