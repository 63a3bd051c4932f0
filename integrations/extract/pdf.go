package extract

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"
)

// pdfDoc is a PDF file read for its text. Objects are found by scanning
// for "n g obj" rather than trusting the cross-reference table, which
// damaged and hand-made files get wrong; a later definition of an object
// number wins, as in an incrementally updated file. Objects inside object
// streams are indexed on first need.
type pdfDoc struct {
	b        []byte
	lim      Limits
	offsets  map[int]int // object number: offset just after "obj"
	packed   map[int]packedObj
	streams  map[int][]byte // decoded object streams kept, by object number
	kept     int64          // bytes of streams kept, at most maxStreamsKept
	keptPeak int64          // the most kept at once
	indexed  bool           // the object streams were indexed
	inflated int64          // bytes inflated so far, all streams
	trailer  pdfDict
}

// packedObj is an object stored in an object stream: the stream's number
// and the object's offset in it, after /First.
type packedObj struct{ stream, offset int }

// maxRefHops bounds a chain of references to references.
const maxRefHops = 32

// maxStreamsKept bounds the bytes of decoded object streams a document
// keeps between lookups. Each stream may inflate to MaxInflate and all of
// them to MaxInflateTotal, far more than a sync worker should hold: a
// stream that does not fit is decoded again when one of its objects is
// needed (and counted again against MaxInflateTotal), and those kept
// before are let go.
const maxStreamsKept = 4 << 20

// openPDF scans data for its objects and trailer.
func openPDF(data []byte, lim Limits) (*pdfDoc, error) {
	if !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrMalformed)
	}
	d := &pdfDoc{b: data, lim: lim, offsets: map[int]int{}, packed: map[int]packedObj{}, streams: map[int][]byte{}}
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("obj"))
		if j < 0 {
			break
		}
		at := i + j
		i = at + 3
		if at+3 < len(data) && isPDFRegular(data[at+3]) {
			continue // "objstm" or a longer word
		}
		num, ok := objHeader(data, at)
		if !ok {
			continue
		}
		if _, seen := d.offsets[num]; !seen && len(d.offsets) >= lim.MaxObjects {
			return nil, fmt.Errorf("%w: more than %d PDF objects", ErrLimit, lim.MaxObjects)
		}
		d.offsets[num] = at + 3
	}
	if t := bytes.LastIndex(data, []byte("trailer")); t >= 0 {
		l := &pdfLexer{b: data, pos: t + len("trailer")}
		if o, err := l.object(true, 0); err == nil {
			d.trailer, _ = o.(pdfDict)
		}
	}
	return d, nil
}

// objHeader reads the "num gen " before the "obj" at at, backwards.
func objHeader(b []byte, at int) (int, bool) {
	i := at
	digits := func() (int, bool) {
		end := i
		for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
			i--
		}
		if i == end || end-i > 9 {
			return 0, false
		}
		n := 0
		for _, c := range b[i:end] {
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	spaces := func() bool {
		end := i
		for i > 0 && isPDFSpace(b[i-1]) {
			i--
		}
		return i < end
	}
	if !spaces() {
		return 0, false
	}
	if _, ok := digits(); !ok || !spaces() {
		return 0, false
	}
	num, ok := digits()
	if !ok || i > 0 && isPDFRegular(b[i-1]) {
		return 0, false
	}
	return num, true
}

// object returns object num, nil if it does not exist.
func (d *pdfDoc) object(num int) any {
	if off, ok := d.offsets[num]; ok {
		return d.parseAt(off)
	}
	if !d.indexed {
		d.indexed = true
		d.indexObjectStreams()
	}
	p, ok := d.packed[num]
	if !ok {
		return nil
	}
	data := d.objectStream(p.stream)
	if p.offset < 0 || p.offset >= len(data) {
		return nil
	}
	l := &pdfLexer{b: data, pos: p.offset}
	o, err := l.object(true, 0)
	if err != nil {
		return nil
	}
	return o
}

// parseAt parses the object whose body starts at off, with its stream if
// one follows.
func (d *pdfDoc) parseAt(off int) any {
	l := &pdfLexer{b: d.b, pos: off}
	o, err := l.object(true, 0)
	if err != nil {
		return nil
	}
	dict, ok := o.(pdfDict)
	if !ok {
		return o
	}
	save := l.pos
	if k, v := l.token(); k != tokKeyword || v != pdfOp("stream") {
		l.pos = save
		return dict
	}
	start := l.pos
	if start < len(d.b) && d.b[start] == '\r' {
		start++
	}
	if start < len(d.b) && d.b[start] == '\n' {
		start++
	}
	end := -1
	if n, ok := d.length(dict["Length"]); ok && n >= 0 && n <= float64(len(d.b)-start) {
		end = start + int(n)
		if !bytes.HasPrefix(bytes.TrimLeft(d.b[end:min(end+32, len(d.b))], "\r\n \t"), []byte("endstream")) {
			end = -1 // a wrong /Length: trust the keyword instead
		}
	}
	if end < 0 {
		e := bytes.Index(d.b[start:], []byte("endstream"))
		if e < 0 {
			return dict
		}
		end = start + e
	}
	return &pdfStream{dict: dict, raw: d.b[start:end]}
}

// length reads a stream's /Length: a number, or a reference to a number
// object. The object is parsed without a stream of its own, so that a
// length that refers to its own stream cannot loop.
func (d *pdfDoc) length(o any) (float64, bool) {
	if r, ok := o.(pdfRef); ok {
		off, found := d.offsets[r.num]
		if !found {
			return 0, false
		}
		l := &pdfLexer{b: d.b, pos: off}
		if o, _ = l.object(true, 0); o == nil {
			return 0, false
		}
	}
	n, ok := o.(float64)
	return n, ok
}

// resolve follows references to the object they name.
func (d *pdfDoc) resolve(o any) any {
	for range maxRefHops {
		r, ok := o.(pdfRef)
		if !ok {
			return o
		}
		o = d.object(r.num)
	}
	return nil
}

// dict resolves o to a dictionary, a stream's dictionary included.
func (d *pdfDoc) dict(o any) pdfDict {
	switch v := d.resolve(o).(type) {
	case pdfDict:
		return v
	case *pdfStream:
		return v.dict
	}
	return nil
}

// indexObjectStreams finds every object stream (/Type /ObjStm) and
// records where each object it packs starts.
func (d *pdfDoc) indexObjectStreams() {
	nums := make([]int, 0, len(d.offsets))
	for n := range d.offsets {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		if !bytes.Contains(d.b[d.offsets[n]:min(d.offsets[n]+256, len(d.b))], []byte("ObjStm")) {
			continue
		}
		s, ok := d.parseAt(d.offsets[n]).(*pdfStream)
		if !ok || s.dict["Type"] != pdfName("ObjStm") {
			continue
		}
		data, err := d.decode(s)
		if err != nil {
			continue
		}
		count, _ := s.dict["N"].(float64)
		first, _ := s.dict["First"].(float64)
		if count < 0 || first < 0 || first > float64(len(data)) {
			continue
		}
		d.keep(n, data)
		l := &pdfLexer{b: data[:int(first)]}
		for i := 0; i < int(min(count, float64(d.lim.MaxObjects))); i++ {
			_, num := l.token()
			_, off := l.token()
			nf, ok1 := num.(float64)
			of, ok2 := off.(float64)
			if !ok1 || !ok2 || nf < 0 || of < 0 || nf > 1e9 || of > 1e9 {
				break
			}
			if _, direct := d.offsets[int(nf)]; direct {
				continue
			}
			if len(d.packed) >= d.lim.MaxObjects {
				return
			}
			d.packed[int(nf)] = packedObj{stream: n, offset: int(first) + int(of)}
		}
	}
}

// keep holds the decoded object stream n for later lookups if it fits in
// maxStreamsKept; the streams kept before are let go to make room.
func (d *pdfDoc) keep(n int, data []byte) {
	size := int64(len(data))
	if size > maxStreamsKept {
		return
	}
	if d.kept+size > maxStreamsKept {
		clear(d.streams)
		d.kept = 0
	}
	d.streams[n] = data
	d.kept += size
	d.keptPeak = max(d.keptPeak, d.kept)
}

// objectStream returns the decoded object stream n, decoding it again if
// it was not kept; nil if it cannot be decoded (or the inflate limits are
// spent).
func (d *pdfDoc) objectStream(n int) []byte {
	if data, ok := d.streams[n]; ok {
		return data
	}
	off, ok := d.offsets[n]
	if !ok {
		return nil
	}
	s, ok := d.parseAt(off).(*pdfStream)
	if !ok {
		return nil
	}
	data, err := d.decode(s)
	if err != nil {
		return nil
	}
	d.keep(n, data)
	return data
}

// errPDFFilter marks a stream in an encoding Extract does not decode.
var errPDFFilter = errors.New("pdf: unsupported stream filter")

// decode returns a stream's data, inflated if it is FlateDecode, within
// the inflate limits. Data cut short is kept as far as it inflated.
func (d *pdfDoc) decode(s *pdfStream) ([]byte, error) {
	var filters []any
	switch f := d.resolve(s.dict["Filter"]).(type) {
	case nil:
		return s.raw, nil
	case pdfName:
		filters = []any{f}
	case []any:
		filters = f
	}
	data := s.raw
	for _, f := range filters {
		name, _ := d.resolve(f).(pdfName)
		if name != "FlateDecode" && name != "Fl" {
			return nil, errPDFFilter
		}
		if dp := d.dict(s.dict["DecodeParms"]); dp != nil {
			if p, _ := dp["Predictor"].(float64); p > 1 {
				return nil, errPDFFilter // only object and xref streams use them
			}
		}
		out, err := d.inflate(data)
		if err != nil {
			return nil, err
		}
		data = out
	}
	return data, nil
}

// inflate decompresses zlib data, or raw deflate when the zlib header is
// missing, failing with ErrLimit past the per-stream or total limit.
func (d *pdfDoc) inflate(data []byte) ([]byte, error) {
	var r io.Reader
	if zr, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
		r = zr
	} else {
		r = flate.NewReader(bytes.NewReader(data))
	}
	room := min(d.lim.MaxInflate, d.lim.MaxInflateTotal-d.inflated)
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, room+1))
	d.inflated += n
	if n > room {
		return nil, fmt.Errorf("%w: a PDF stream inflates past its limit", ErrLimit)
	}
	if err != nil && buf.Len() == 0 {
		return nil, fmt.Errorf("%w: pdf stream: %w", ErrMalformed, err)
	}
	return buf.Bytes(), nil
}
