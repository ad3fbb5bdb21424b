// Npy: NumPy's .npy format — a reader (version 1 to 3 headers) and a version 1.0 writer.
#include "core/Npy.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/File.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

namespace loupe {

namespace {

// The value text of `'key': value` in the header dictionary.
std::string headerValue(const std::string &header, const std::string &key,
                        const std::string &path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    fail(path, ": the .npy header has no '", key, "'");
  size_t colon = header.find(':', k);
  size_t start = colon == std::string::npos ? colon : header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos)
    fail(path, ": the .npy header's '", key, "' has no value");
  size_t end = header[start] == '(' ? header.find(')', start) : header.find_first_of(",}", start);
  if (end == std::string::npos)
    fail(path, ": the .npy header's '", key, "' is not closed");
  return header.substr(start, end - start + (header[start] == '(' ? 1 : 0));
}

// NumPy's type strings (little-endian; one-byte types take '|'), in dtype-code order.
struct Descr {
  int dtype;
  const char *text;
};
constexpr Descr kDescrs[] = {{kFloat32, "<f4"}, {kFloat64, "<f8"}, {kFloat16, "<f2"},
                             {kUint8, "|u1"},   {kInt32, "<i4"},   {kInt8, "|i1"},
                             {kInt64, "<i8"},   {kInt16, "<i2"},   {kUint16, "<u2"},
                             {kUint32, "<u4"},  {kUint64, "<u8"},  {kBoolean, "|b1"}};

const char *descrOf(int dtype) {
  for (const Descr &d : kDescrs)
    if (d.dtype == dtype)
      return d.text;
  return nullptr;
}

// The dtype of a header's quoted descr ('<f4'); '<' and '|' are accepted for one-byte types.
std::optional<int> dtypeOfDescr(const std::string &quoted) {
  for (const Descr &d : kDescrs) {
    std::string t = d.text;
    if (quoted == "'" + t + "'" || (t[0] == '|' && quoted == "'<" + t.substr(1) + "'"))
      return d.dtype;
  }
  return std::nullopt;
}

std::string supportedDescrs() {
  std::string s;
  for (const Descr &d : kDescrs)
    s += (s.empty() ? "" : ", ") + std::string(dtypeName(d.dtype));
  return s;
}

} // namespace

Tensor readNpy(const std::string &path) { return parseNpy(readFile(path), path); }

Tensor parseNpy(const std::string &bytes, const std::string &path) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail(path, ": not a .npy file");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else {
    if (bytes.size() < 12)
      fail(path, ": truncated .npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  }
  if (offset + headerLen > bytes.size())
    fail(path, ": truncated .npy header");
  std::string header = bytes.substr(offset, headerLen);
  std::string descr = headerValue(header, "descr", path);
  if (headerValue(header, "fortran_order", path) != "False")
    fail(path, ": Fortran-order arrays are not supported");
  std::string shapeText = headerValue(header, "shape", path);
  Shape shape;
  for (size_t i = 0; i < shapeText.size();) {
    if (std::isdigit(static_cast<unsigned char>(shapeText[i]))) {
      size_t j = i;
      while (j < shapeText.size() && std::isdigit(static_cast<unsigned char>(shapeText[j])))
        ++j;
      // Checked: a dimension of 20 digits is bad input, not an escaping std::out_of_range
      // (found by fuzzing).
      int64_t d = 0;
      for (size_t c = i; c < j; ++c)
        if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, shapeText[c] - '0', &d))
          fail(path, ": dimension ", shapeText.substr(i, j - i), " of the .npy shape is too large");
      shape.push_back(d);
      i = j;
    } else {
      ++i;
    }
  }
  if (shape.empty()) // 'shape': () is NumPy's 0-d array, a scalar
    shape = Shape::scalar();
  auto dtype = dtypeOfDescr(descr);
  if (!dtype)
    fail(path, ": dtype ", descr, " is not supported (", supportedDescrs(), " are)");
  auto width = static_cast<size_t>(dtypeBytes(*dtype));
  // The size is checked before the tensor is allocated, the product as it grows: a header may
  // declare any shape.
  size_t available = (bytes.size() - offset - headerLen) / width;
  if (std::find(shape.begin(), shape.end(), 0) == shape.end()) {
    size_t count = 1;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(count, static_cast<size_t>(d), &count))
        count = SIZE_MAX;
    if (count > available)
      fail(path, ": the data is shorter than shape ", shapeToList(shape), " needs");
  }
  Tensor t(shape, *dtype);
  const char *data = bytes.data() + offset + headerLen;
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = loadElement(data + i * width, *dtype);
  return t;
}

std::string npyBytes(const Tensor &t) {
  int fileType = widenedDType(t.dtype); // NumPy has no bfloat16
  const char *descr = descrOf(fileType);
  if (!descr)
    fail("cannot write dtype ", dtypeName(t.dtype), " to a .npy file");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i)
    shape += std::to_string(t.shape[i]) + (t.shape.size() == 1      ? ","
                                           : i + 1 < t.shape.size() ? ", "
                                                                    : "");
  shape += ")";
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic, version and length take 10 bytes; the header is padded so the data starts 64-aligned.
  size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header += std::string(total - 10 - header.size() - 1, ' ') + "\n";
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  auto width = static_cast<size_t>(dtypeBytes(fileType));
  for (double v : t.data) {
    char buf[8];
    storeElement(buf, fileType, v);
    bytes.append(buf, width);
  }
  return bytes;
}

void writeNpy(const std::string &path, const Tensor &t) { writeFileAtomically(path, npyBytes(t)); }

std::string npyFileStem(const std::string &name) {
  std::string stem = name.empty() ? "_" : name;
  for (char &c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      c = '_';
  if (stem.find_first_not_of('.') == std::string::npos)
    stem = "_" + stem;
  return stem;
}

} // namespace loupe
