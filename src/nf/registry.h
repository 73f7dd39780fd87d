// NF registry: builds NFs and chains by name, with parameters from a TOML config.
//
//   std::string err;
//   auto chain = build_chain("firewall,nat,lb", &config, err);   // config: the file's root table
//   if (!chain) { print(err); }
//
// The parameters of NF `x` are the table [nf.x] of the config; a missing table, a missing key
// or config == nullptr means the documented default (docs/nfs.md), so every NF works out of the
// box. Errors are one line: an unknown NF lists the valid names; a bad parameter names
// "[nf.x] key", what is expected and what was given; unknown keys are errors too (typos must
// not silently fall back to defaults). In a chain spec, "busy(570)" is shorthand for busy with
// cycles = 570. Only registry.cc (and NFs' own parse functions) include toml++.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nf/nf.h"
#include "nf/toml_fwd.h"

namespace nfpark::nf {

// Every name make_nf accepts, sorted.
std::vector<std::string_view> nf_names();

// Builds NF `name` from its parameter table (nullptr = all defaults). nullptr + error on failure.
std::unique_ptr<Nf> make_nf(std::string_view name, const toml::table* params, std::string& error);

// Checks every [nf.NAME] table of `config` (its root table) against the registry — NAME must
// be an NF and its parameters valid — whether or not NAME is in the chain, without building
// anything. false + error on the first problem.
bool check_nf_tables(const toml::table* config, std::string& error);

// Checks the chain spec and its NFs' parameters as build_chain would, without building them;
// `memory` (if given) receives an estimate of the bytes their tables will take (flow tables,
// NAT port maps, Maglev tables).
bool check_chain(std::string_view spec, const toml::table* config, std::string& error,
                 uint64_t* memory = nullptr);

// Builds the chain "a,b,c" (names separated by commas, blanks ignored); NF x reads [nf.x] of
// `config` (nullptr = defaults). nullptr + error on failure.
std::unique_ptr<Chain> build_chain(std::string_view spec, const toml::table* config,
                                   std::string& error);

}  // namespace nfpark::nf
