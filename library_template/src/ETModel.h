// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// ETModel: load a .pte held in flash and run its first method, with every
// runtime allocation taken from one caller-supplied arena.
//
//   alignas(16) static uint8_t arena[8 * 1024];
//   static ETModel model(model_pte, sizeof(model_pte), arena, sizeof(arena));
//
// A large arena is better taken from malloc (see the KeywordSpotting example):
// in the Dynamic link mode the board's loader copies static arrays into its
// LLEXT heap (128 KiB on cores before mid-2026); malloc uses the firmware's.
//
//   if (!model.begin()) Serial.println(model.error());
//   model.setInput(0, values, 3);
//   if (!model.run()) Serial.println(model.error());
//   const float* out = model.output();
//
// Every call that can fail returns false (or nullptr) and leaves a reason in
// error(), e.g. "load_method failed (0x21)": the failing runtime call and its
// executorch::runtime::Error code in hex. program() and method() expose the
// runtime objects for anything this class does not cover.

#pragma once

#include <ExecuTorch.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>

// The runtime's last "Missing operator: [i] name" log message, or "" (the
// library's platform layer).
extern "C" const char* et_arduino_missing_operator(void);

class ETModel {
 public:
  // model_data and arena are borrowed, not copied: both must outlive the
  // ETModel (on a board: make them static or global).
  ETModel(
      const uint8_t* model_data,
      size_t model_size,
      uint8_t* pool,
      size_t pool_size)
      : loader_(model_data, model_size),
        arena_(static_cast<uint32_t>(pool_size), pool) {}

  ETModel(const ETModel&) = delete;
  ETModel& operator=(const ETModel&) = delete;

  // Loads the program and its first method, taking the method's state and
  // its memory-planned buffers from the arena. Call once, from setup();
  // calling it again after success does nothing and returns true.
  bool begin() {
    if (method_) {
      return true;
    }
    executorch::runtime::runtime_init();

    auto program = executorch::runtime::Program::load(&loader_);
    if (!program.ok()) {
      return failCall("Program::load", program.error());
    }
    program_.emplace(std::move(program.get()));

    auto name = program_->get_method_name(0);
    if (!name.ok()) {
      return failCall("get_method_name", name.error());
    }
    method_name_ = name.get();

    auto meta = program_->method_meta(method_name_);
    if (!meta.ok()) {
      return failCall("method_meta", meta.error());
    }

    // The exporter's memory plan: one buffer per id, sized at export time,
    // holding the method's intermediate tensors.
    const size_t count = meta->num_memory_planned_buffers();
    auto* spans = static_cast<Span*>(
        arena_.allocate(count * sizeof(Span), alignof(Span)));
    if (spans == nullptr && count > 0) {
      return failArena("planned-buffer table", count * sizeof(Span));
    }
    for (size_t i = 0; i < count; i++) {
      auto size = meta->memory_planned_buffer_size(i);
      if (!size.ok()) {
        return failCall("memory_planned_buffer_size", size.error());
      }
      const size_t bytes = static_cast<size_t>(size.get());
      auto* buffer = static_cast<uint8_t*>(arena_.allocate(bytes));
      if (buffer == nullptr && bytes > 0) {
        return failArena("planned buffer", bytes);
      }
      spans[i] = Span(buffer, bytes);
    }
    planned_.emplace(executorch::runtime::Span<Span>(spans, count));
    manager_.emplace(&arena_, &*planned_);

    auto method = program_->load_method(method_name_, &*manager_);
    if (!method.ok()) {
      return failCall("load_method", method.error());
    }
    method_.emplace(std::move(method.get()));
    return true;
  }

  // Binds float input `index` to `data` (count elements, in the model's
  // memory order). The runtime copies it into the arena when the exporter
  // planned memory for that input and reads it in place otherwise, so `data`
  // must stay valid until run() returns. Shape and dtype come from the model;
  // only the element count is checked.
  bool setInput(size_t index, const float* data, size_t count) {
    if (!method_) {
      return failText("setInput: call begin() first");
    }
    if (index >= method_->inputs_size()) {
      return failIndex("setInput", "input", index, method_->inputs_size());
    }
    if (index >= kMaxInputs) {
      return failIndex("setInput", "input", index, kMaxInputs);
    }
    auto info = method_->method_meta().input_tensor_meta(index);
    if (!info.ok()) {
      return failCall("input_tensor_meta", info.error());
    }
    if (info->scalar_type() != executorch::aten::ScalarType::Float) {
      snprintf(
          error_,
          sizeof(error_),
          "setInput: input %lu is not float (ScalarType %d)",
          static_cast<unsigned long>(index),
          static_cast<int>(info->scalar_type()));
      return false;
    }
    const size_t dims = info->sizes().size();
    if (dims > kMaxDims) {
      snprintf(
          error_,
          sizeof(error_),
          "setInput: input %lu has %lu dims, at most %lu supported",
          static_cast<unsigned long>(index),
          static_cast<unsigned long>(dims),
          static_cast<unsigned long>(kMaxDims));
      return false;
    }
    size_t expected = 1;
    for (size_t d = 0; d < dims; d++) {
      sizes_[index][d] = static_cast<SizesType>(info->sizes()[d]);
      dim_order_[index][d] = static_cast<DimOrderType>(info->dim_order()[d]);
      expected *= static_cast<size_t>(info->sizes()[d]);
    }
    if (expected != count) {
      snprintf(
          error_,
          sizeof(error_),
          "setInput: input %lu takes %lu values, got %lu",
          static_cast<unsigned long>(index),
          static_cast<unsigned long>(expected),
          static_cast<unsigned long>(count));
      return false;
    }
    // Strides follow from sizes and dim order: the innermost dimension in
    // memory has stride 1.
    StridesType stride = 1;
    for (size_t k = dims; k > 0; k--) {
      const size_t d = dim_order_[index][k - 1];
      strides_[index][d] = stride;
      stride *= static_cast<StridesType>(sizes_[index][d]);
    }
    impls_[index].emplace(
        executorch::aten::ScalarType::Float,
        static_cast<ssize_t>(dims),
        sizes_[index],
        const_cast<float*>(data),
        dim_order_[index],
        strides_[index]);
    tensors_[index].emplace(&*impls_[index]);
    const auto status = method_->set_input(
        executorch::runtime::EValue(*tensors_[index]), index);
    if (status != executorch::runtime::Error::Ok) {
      return failCall("set_input", status);
    }
    return true;
  }

  // Runs the method once on the inputs set so far.
  bool run() {
    if (!method_) {
      return failText("run: call begin() first");
    }
    const et_timestamp_t start = et_pal_current_ticks();
    const auto status = method_->execute();
    const et_timestamp_t end = et_pal_current_ticks();
    if (status != executorch::runtime::Error::Ok) {
      return failCall("execute", status);
    }
    last_run_us_ = ticksToMicros(end - start);
    return true;
  }

  // Microseconds the last successful run() took (the runtime's clock, which
  // is micros() in this library's platform layer); 0 before any. A failed
  // run() leaves it unchanged.
  unsigned long lastRunMicros() const {
    return last_run_us_;
  }

  // Float data of output `index`, valid until the next run(); nullptr (see
  // error()) if there is no such output or it is not a float tensor.
  const float* output(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor(index);
    if (tensor == nullptr) {
      return nullptr;
    }
    if (tensor->scalar_type() != executorch::aten::ScalarType::Float) {
      snprintf(
          error_,
          sizeof(error_),
          "output: output %lu is not float (ScalarType %d)",
          static_cast<unsigned long>(index),
          static_cast<int>(tensor->scalar_type()));
      return nullptr;
    }
    return tensor->const_data_ptr<float>();
  }

  // Number of elements of output `index`; 0 if there is no such tensor.
  size_t outputCount(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor(index);
    return tensor ? static_cast<size_t>(tensor->numel()) : 0;
  }

  // Position of the largest value of output `index` (a classifier's answer);
  // -1 if the output is missing or empty.
  int argmax(size_t index = 0) {
    const float* values = output(index);
    const size_t count = outputCount(index);
    if (values == nullptr || count == 0) {
      return -1;
    }
    size_t best = 0;
    for (size_t i = 1; i < count; i++) {
      if (values[i] > values[best]) {
        best = i;
      }
    }
    return static_cast<int>(best);
  }

  // Why the last failing call failed; "no error" if none has. Never null.
  const char* error() const {
    return error_[0] != '\0' ? error_ : "no error";
  }

  // The loaded runtime objects, or nullptr before a successful begin().
  executorch::runtime::Program* program() {
    return program_ ? &*program_ : nullptr;
  }
  executorch::runtime::Method* method() {
    return method_ ? &*method_ : nullptr;
  }

  // Bytes of the arena handed out so far, alignment padding included: the
  // smallest arena this model would have loaded with, give or take padding.
  size_t arenaUsed() const {
    return arena_.used();
  }

  // Bytes in the arena passed to the constructor.
  size_t arenaSize() const {
    return static_cast<size_t>(arena_.size());
  }

 private:
  using Span = executorch::runtime::Span<uint8_t>;
  using SizesType = executorch::aten::TensorImpl::SizesType;
  using DimOrderType = executorch::aten::TensorImpl::DimOrderType;
  using StridesType = executorch::aten::TensorImpl::StridesType;
  static constexpr size_t kMaxInputs = 4;
  static constexpr size_t kMaxDims = 8;

  // A bump allocator that remembers how far it has bumped: the end of the
  // last allocation minus the base, which is what MemoryAllocator::used_size()
  // returns where it exists (d756e7d8c2, v1.4.1, main). v1.3.x and older lack
  // it, and the generator takes any ref, so count here instead.
  class Arena : public executorch::runtime::MemoryAllocator {
   public:
    Arena(uint32_t size, uint8_t* base) : MemoryAllocator(size, base) {}

    void* allocate(size_t size, size_t alignment = kDefaultAlignment)
        override {
      void* block = MemoryAllocator::allocate(size, alignment);
      if (block != nullptr) {
        const size_t end =
            static_cast<size_t>(static_cast<uint8_t*>(block) - base_address()) +
            size;
        if (end > used_) {
          used_ = end;
        }
      }
      return block;
    }

    size_t used() const {
      return used_;
    }

   private:
    size_t used_ = 0;
  };

  const executorch::aten::Tensor* outputTensor(size_t index) {
    if (!method_) {
      failText("output: call begin() first");
      return nullptr;
    }
    if (index >= method_->outputs_size()) {
      failIndex("output", "output", index, method_->outputs_size());
      return nullptr;
    }
    const executorch::runtime::EValue& value = method_->get_output(index);
    if (!value.isTensor()) {
      snprintf(
          error_,
          sizeof(error_),
          "output: output %lu is not a tensor",
          static_cast<unsigned long>(index));
      return nullptr;
    }
    return &value.toTensor();
  }

  // The platform layer's ticks are micros() (1000 ns each); convert with its
  // own ratio so another layer's clock still reads in microseconds.
  static unsigned long ticksToMicros(et_timestamp_t ticks) {
    const et_tick_ratio_t ratio = et_pal_ticks_to_ns_multiplier();
    if (ratio.denominator == 0) {
      return 0;
    }
    return static_cast<unsigned long>(
        ticks * ratio.numerator / ratio.denominator / 1000);
  }

  bool failCall(const char* call, executorch::runtime::Error status) {
    const int n = snprintf(
        error_,
        sizeof(error_),
        "%s failed (0x%lx)",
        call,
        static_cast<unsigned long>(status));
    // An operator the sketch did not register: name it (the runtime logged
    // "Missing operator: [i] name" just before returning OperatorMissing).
    const char* logged = et_arduino_missing_operator();
    if (status == executorch::runtime::Error::OperatorMissing && n > 0 &&
        static_cast<size_t>(n) < sizeof(error_) && logged[0] != '\0') {
      snprintf(
          error_ + n,
          sizeof(error_) - static_cast<size_t>(n),
          ": %s; not registered: not selected by the sketch's model.h files, "
          "or not in this library (extras/tools/check_models.py tells)",
          logged);
    }
    // Out of memory inside the runtime almost always means the arena.
    if (status == executorch::runtime::Error::MemoryAllocationFailed && n > 0 &&
        static_cast<size_t>(n) < sizeof(error_)) {
      snprintf(
          error_ + n,
          sizeof(error_) - static_cast<size_t>(n),
          ": the %lu-byte arena is too small",
          static_cast<unsigned long>(arena_.size()));
    }
    return false;
  }

  bool failArena(const char* what, size_t bytes) {
    snprintf(
        error_,
        sizeof(error_),
        "arena too small: %lu bytes for the %s, %lu of %lu used",
        static_cast<unsigned long>(bytes),
        what,
        static_cast<unsigned long>(arena_.used()),
        static_cast<unsigned long>(arena_.size()));
    return false;
  }

  bool failIndex(const char* call, const char* what, size_t index, size_t n) {
    snprintf(
        error_,
        sizeof(error_),
        "%s: %s %lu out of range (%lu available)",
        call,
        what,
        static_cast<unsigned long>(index),
        static_cast<unsigned long>(n));
    return false;
  }

  bool failText(const char* text) {
    snprintf(error_, sizeof(error_), "%s", text);
    return false;
  }

  executorch::extension::BufferDataLoader loader_;
  Arena arena_;
  std::optional<executorch::runtime::Program> program_;
  std::optional<executorch::runtime::HierarchicalAllocator> planned_;
  std::optional<executorch::runtime::MemoryManager> manager_;
  std::optional<executorch::runtime::Method> method_;
  const char* method_name_ = nullptr;
  unsigned long last_run_us_ = 0;

  std::optional<executorch::aten::TensorImpl> impls_[kMaxInputs];
  std::optional<executorch::aten::Tensor> tensors_[kMaxInputs];
  SizesType sizes_[kMaxInputs][kMaxDims] = {};
  DimOrderType dim_order_[kMaxInputs][kMaxDims] = {};
  StridesType strides_[kMaxInputs][kMaxDims] = {};

  char error_[192] = {};
};
