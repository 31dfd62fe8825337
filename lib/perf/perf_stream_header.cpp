// The attrs of a perf.data and their names as the stream delivers them:
// pipe mode's HEADER_ATTR, HEADER_TRACING_DATA, HEADER_BUILD_ID,
// HEADER_FEATURE and EVENT_UPDATE records, and naming every attr (both modes)
// from EVENT_UPDATE, EVENT_DESC, tracepoint formats from TRACING_DATA, or
// type/config, kept linear in the input however the names arrive.
#include "perf/perf_features.h"
#include "perf/perf_reader_impl.h"

namespace fg {

using perf_abi::FormatError;
using perf_abi::load;
namespace abi = perf_abi;
using perf_read::H;

// Names, best source first: EVENT_UPDATE (pipe), EVENT_DESC, the tracepoint
// format for TRACEPOINT attrs, then a name derived from type/config. All
// attrs, in O(attrs + ids): once for a file's header, and for a pipe when
// names_changed() allows it or at the end of the read (names_dirty).
void PerfDataReader::Impl::resolve_names() {
  names_dirty = false;
  index_event_desc();
  update_names.resize(info.attrs.size());
  for (size_t i = 0; i < info.attrs.size(); ++i) resolve_one(i);
  stats.samples_per_attr.resize(info.attrs.size());
}

void PerfDataReader::Impl::index_event_desc() {
  for (; descs_indexed < event_desc.size(); ++descs_indexed)
    for (uint64_t id : event_desc[descs_indexed].ids) desc_by_id.emplace(id, descs_indexed);
}

// One attr's name, best source first (see resolve_names).
void PerfDataReader::Impl::resolve_one(size_t i) {
  EventAttr& a = info.attrs[i];
  a.name.clear();
  if (i < update_names.size() && !update_names[i].empty()) {
    a.name = update_names[i];
    return;
  }
  // EVENT_DESC: by the first of the attr's ids it lists, else by position
  // when it describes exactly the attrs there are.
  const std::string* desc = nullptr;
  for (uint64_t id : a.ids)
    if (auto it = desc_by_id.find(id); it != desc_by_id.end()) {
      desc = &event_desc[it->second].name;
      break;
    }
  if (!desc && event_desc.size() == info.attrs.size()) desc = &event_desc[i].name;
  if (desc && !desc->empty()) {
    a.name = *desc;
    return;
  }
  if (a.type == 2) {
    if (!info.tracing_data.empty() && tracing_parsed_size != info.tracing_data.size()) {
      tracing_parsed_size = info.tracing_data.size();
      try {
        tracing = TracingData::parse(info.tracing_data, path, info.tracing_data_offset);
      } catch (const InputError& e) {
        tracing = TracingData();
        warn(std::string(e.what()));
      }
    }
    if (const auto* f = tracing.find(a.config)) {
      a.name = f->full_name();
      return;
    }
  }
  a.name = perf_file::default_event_name(a);
}

// A source of names for all attrs changed: re-resolve now while the work
// done so is proportional to the input, else at the end of the read.
void PerfDataReader::Impl::names_changed() {
  const uint64_t cost = info.attrs.size() + total_ids + 1;
  if (resolve_work + cost <= kResolveWorkPerByte * input_bytes() + (uint64_t(1) << 20)) {
    resolve_work += cost;
    resolve_names();
  } else {
    names_dirty = true;
  }
}

// The header facts a pipe-mode stream carries as records (a file may repeat
// some): attrs with their ids, tracing data, build-ids, features, names.
void PerfDataReader::Impl::process_header_record(uint32_t type, const uint8_t* rec, uint32_t size, uint64_t offset,
                                                 bool inner) {
  switch (type) {
    case abi::HEADER_ATTR: {
      EventAttr a = perf_file::parse_event_attr(rec + H, size - H);
      size_t nids = (size - H - a.size) / 8;
      a.ids.resize(nids);
      if (nids) std::memcpy(a.ids.data(), rec + H + a.size, nids * 8);
      total_ids += nids;
      info.attrs.push_back(std::move(a));
      stats.samples_per_attr.resize(info.attrs.size());
      if (auto w = selector.add(info.attrs.back(), info.attrs[0]); !w.empty()) warn(path + ": " + w);
      resolve_one(info.attrs.size() - 1);
      // EVENT_DESC names by position depend on the number of attrs.
      if (!event_desc.empty()) names_dirty = true;
      break;
    }
    case abi::HEADER_TRACING_DATA: {
      if (inner) throw FormatError("HEADER_TRACING_DATA inside a COMPRESSED record is not supported");
      if (size < H + 4) throw FormatError("too short for its size field");
      uint32_t n = load<uint32_t>(rec + H);
      info.tracing_data_offset = (stream ? stream->offset() : pos);
      info.tracing_data = read_extra(n, true);
      // The blob is padded to 8; the exact size is found by parsing.
      info.features[0] |= uint64_t(1) << abi::FEAT_TRACING_DATA;
      names_changed();
      break;
    }
    case abi::HEADER_BUILD_ID:
      perf_features::parse_build_id_entry(load<uint16_t>(rec + 4), rec + H, size - H, info);
      break;
    case abi::HEADER_FEATURE: {
      if (size < H + 8) throw FormatError("too short for its feature id");
      uint64_t feat = load<uint64_t>(rec + H);
      // The run of features ends with a sentinel (HEADER_LAST_FEATURE, whose value
      // depends on the perf version) with an empty payload: nothing to parse.
      if (feat < 256 && size > H + 8) {
        perf_features::parse_feature(static_cast<int>(feat), rec + H + 8, size - H - 8, info, event_desc);
        if (feat == abi::FEAT_TRACING_DATA) info.tracing_data_offset = inner ? offset : offset + H + 8;
        if (feat == abi::FEAT_EVENT_DESC) names_changed();
      }
      break;
    }
    case abi::EVENT_UPDATE: {
      if (size < H + 16) throw FormatError("too short for its type and id");
      uint64_t utype = load<uint64_t>(rec + H), id = load<uint64_t>(rec + H + 8);
      if (utype == 2) {  // PERF_EVENT_UPDATE__NAME
        const char* s = reinterpret_cast<const char*>(rec + H + 16);
        std::string name(s, strnlen(s, size - H - 16));
        // The attr that listed the id (an id map lookup, not a scan of every
        // attr's ids per record).
        size_t i = selector.attr_of_id(id);
        if (!name.empty() && i < info.attrs.size()) {
          update_names.resize(info.attrs.size());
          update_names[i] = std::move(name);
          resolve_one(i);
        }
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace fg
