// The two CRC-32s of the logs lrkit reads: CRC-32C (Castagnoli), TFRecord's (TensorBoard's event files), and the
// CRC-32 of zlib, Ethernet and PNG (IEEE 802.3), which Weights & Biases' run logs use.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lrkit {

uint32_t crc32c(const unsigned char* data, size_t size);

// zlib's crc32(previous, data, size): `previous` is the CRC of the bytes before `data` (0 for none), so a CRC may be
// taken over two pieces as over the one they make.
uint32_t crc32_ieee(const unsigned char* data, size_t size, uint32_t previous = 0);

}  // namespace lrkit
