package refserver

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// The binary fixtures are generated at first use rather than pasted in, so
// they are real, decodable files: a 2x2 PNG and a 16-sample WAV.

// pngBase64 returns a base64 (standard alphabet) 2x2 RGBA PNG.
var pngBase64 = sync.OnceValue(func() string {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.NRGBA{R: 0xd0, G: 0x20, B: 0x20, A: 0xff})
	img.Set(1, 0, color.NRGBA{R: 0x20, G: 0xa0, B: 0x40, A: 0xff})
	img.Set(0, 1, color.NRGBA{R: 0x20, G: 0x40, B: 0xd0, A: 0xff})
	img.Set(1, 1, color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0x80})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic("refserver: cannot encode the PNG fixture: " + err.Error())
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
})

// wavBase64 returns a base64 (standard alphabet) RIFF/WAVE file: PCM, mono,
// 8 kHz, 16 bit, 16 samples of a quiet square wave.
var wavBase64 = sync.OnceValue(func() string {
	const (
		rate     = 8000
		channels = 1
		bits     = 16
		samples  = 16
	)
	data := make([]byte, 0, samples*2)
	for i := 0; i < samples; i++ {
		v := int16(256)
		if i%8 >= 4 {
			v = -256
		}
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
	}
	le := binary.LittleEndian
	b := make([]byte, 0, 44+len(data))
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(36+len(data)))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16) // fmt chunk size
	b = le.AppendUint16(b, 1)  // PCM
	b = le.AppendUint16(b, channels)
	b = le.AppendUint32(b, rate)
	b = le.AppendUint32(b, rate*channels*bits/8) // byte rate
	b = le.AppendUint16(b, channels*bits/8)      // block align
	b = le.AppendUint16(b, bits)
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return base64.StdEncoding.EncodeToString(b)
})
