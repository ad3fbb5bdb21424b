// AttrOrder: the order NNVM printed a node's attributes in, derived from the hash table it kept
// them in.
#pragma once

#include "core/Attrs.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace loupe {

/// libstdc++'s std::hash<std::string> on a 64-bit target (`std::_Hash_bytes` with the seed
/// 0xc70f6907: MurmurHash2 over 8-byte words), written out so that the order below does not
/// depend on the standard library Loupe is built with.
size_t libstdcxxStringHash(std::string_view s);

/// The iteration order of NNVM's `NodeAttrs::dict`, a `std::unordered_map<std::string,
/// std::string>`, after `keys` were inserted in order into an empty map — as NNVM filled it from
/// Python's keyword arguments, a JSON file (dmlc's reader), a dmlc::Parameter's UpdateDict (its
/// fields in name order) or `dict[key] = value` in a pass. Returns indexes into `keys`.
///
/// The map is simulated as the libstdc++ NNVM was built with (GCC 5) made it: a singly linked
/// list of nodes with an array of buckets pointing into it; a default-constructed map has one
/// bucket; before an insertion that would bring the elements to the rehash point, the buckets
/// grow to the table prime after max(elements + 1, 2 * buckets) (3, 7, 17, 37, …); a new node
/// goes to the front of its bucket, or of the whole list when its bucket is empty; a rehash walks
/// the list and does the same into the new buckets. `presized` > 0 models a map constructed from
/// an initializer list of that many entries (NNVM's MakeNode), whose buckets are sized for all
/// of them before any is inserted; for up to two entries this is the same as inserting them one
/// by one.
std::vector<size_t> nnvmDictOrder(const std::vector<std::string_view> &keys, size_t presized = 0);

/// `dict` in the order NNVM's PrintGraphIR printed it (nnvmDictOrder of its keys in the order
/// they were written, sized as the dict was made). A key written again keeps its first
/// position, as in the map.
AttrDict nnvmOrdered(const AttrDict &dict);

} // namespace loupe
