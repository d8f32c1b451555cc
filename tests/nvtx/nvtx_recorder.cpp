// An NVTX injection library for tests: loaded through NVTX_INJECTION64_PATH,
// it writes every range push ("push <name>") and pop ("pop") to the file
// named by PORTALAB_NVTX_LOG, so a test can check names, nesting and balance
// without Nsight Systems.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace {

std::FILE* log_file() {
  static std::FILE* f = [] {
    const char* path = std::getenv("PORTALAB_NVTX_LOG");
    return path ? std::fopen(path, "w") : nullptr;
  }();
  return f;
}

int push(const char* message) {
  if (auto* f = log_file()) std::fprintf(f, "push %s\n", message), std::fflush(f);
  return 0;
}

int pop() {
  if (auto* f = log_file()) std::fprintf(f, "pop\n"), std::fflush(f);
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(
      get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size)) return 0;
  if (size <= NVTX_CBID_CORE_RangePop) return 0;
  *table[NVTX_CBID_CORE_RangePushA] = reinterpret_cast<NvtxFunctionPointer>(&push);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  return 1;  // success: NVTX calls go to these from now on
}
