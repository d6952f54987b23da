// SPDX-License-Identifier: BSD-3-Clause
// Part of the ExecuTorch Arduino library generator.
//
// ETModel: load a .pte held in flash and run its first method, with every
// runtime allocation taken from one caller-supplied arena.
//
//   alignas(16) static uint8_t arena[model_pte_arena_bytes];
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
//   Serial.println(model.lastRunMicros());
//
// Every call that can fail returns false (or nullptr, 0, -1) and leaves a
// reason in error(): what failed, the executorch::runtime::Error by name and
// hex code, and what to do, e.g.
//   "load_method: MemoryAllocationFailed (0x21): the 4096-byte arena is too
//    small, needs at least 5120 B (model.h: *_arena_bytes)".
//
// Data types: setInput(), output<T>() take float, int8_t, uint8_t, int16_t,
// int32_t, int64_t, double or bool, matched to the model's dtype (float32,
// int8, uint8, ...): a quantized model that takes int8 is fed
// setInput(0, (const int8_t*)q, n) and read with output<int8_t>(). output()
// without a type is output<float>(). The model decides the dtype; a mismatch
// is refused, never converted. inputType()/outputType() and dtypeName() say
// which one a model takes.
//
// Shapes: numInputs(), numOutputs(), inputDims(i), inputSize(i, d),
// inputCount(i), and the same for outputs, read from the loaded method. A
// model exported with dynamic shapes takes a smaller input through
// setInput(i, data, count, shape, dims); inputSize() is the largest size.
//
// program() and method() expose the runtime objects for anything this class
// does not cover. ETModel takes nothing from the heap and throws nothing.

#pragma once

#include <ExecuTorch.h>
#include <executorch/runtime/platform/platform.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

// The runtime's last "Missing operator: [i] name" log message, or "" (the
// library's platform layer).
extern "C" const char* et_arduino_missing_operator(void);
// Whether the library's kernel-selection fallback ran: no model.h of the sketch
// selects kernels, so only the operators libraries had before kernel selection
// are registered (src/executorch/codegen/KernelSelection.cpp).
extern "C" bool et_arduino_kernels_fell_back(void);

class ETModel {
 public:
  using DType = executorch::aten::ScalarType;
  using Error = executorch::runtime::Error;

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
    // A begin() that failed may have taken part of the arena: start over.
    arena_.reset();

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
    for (size_t i = kMaxInputs; i < meta->num_inputs(); i++) {
      auto tag = meta->input_tag(i);
      if (tag.ok() && tag.get() == executorch::runtime::Tag::Tensor) {
        snprintf(
            error_,
            sizeof(error_),
            "begin: input %lu is a tensor; ETModel sets inputs 0-%lu only",
            static_cast<unsigned long>(i),
            static_cast<unsigned long>(kMaxInputs - 1));
        return false;
      }
    }

    // The exporter's memory plan: one buffer per id, sized at export time,
    // holding the method's intermediate tensors. Summed first, so that an
    // arena too small for them says how much they take.
    const size_t count = meta->num_memory_planned_buffers();
    size_t planned_bytes = count * sizeof(Span);
    for (size_t i = 0; i < count; i++) {
      auto size = meta->memory_planned_buffer_size(i);
      if (!size.ok()) {
        return failCall("memory_planned_buffer_size", size.error());
      }
      planned_bytes += static_cast<size_t>(size.get());
    }
    auto* spans = static_cast<Span*>(
        arena_.allocate(count * sizeof(Span), alignof(Span)));
    if (spans == nullptr && count > 0) {
      return failArena("begin", planned_bytes);
    }
    for (size_t i = 0; i < count; i++) {
      const size_t bytes =
          static_cast<size_t>(meta->memory_planned_buffer_size(i).get());
      auto* buffer = static_cast<uint8_t*>(arena_.allocate(bytes));
      if (buffer == nullptr && bytes > 0) {
        return failArena("begin", planned_bytes);
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

  // Binds input `index` to `data` (count elements of the model's dtype, in
  // its memory order); T must be that dtype's C type (see the top of this
  // file). The runtime copies the data into the arena when the exporter
  // planned memory for that input and reads it in place otherwise, so `data`
  // must stay valid until run() returns. Shape and dtype come from the model;
  // the element count is checked. A refused call leaves input `index` unset.
  template <typename T>
  bool setInput(size_t index, const T* data, size_t count) {
    return bindInput(index, dtypeOf<T>(), const_cast<T*>(data), count);
  }
  bool setInput(size_t index, const float* data, size_t count) {
    return setInput<float>(index, data, count);
  }

  // The same with a shape of its own, for a model exported with dynamic
  // shapes (torch.export's Dim, e.g. a batch of 1 to 8): `shape` holds one
  // size per dimension of the input, each at most the size the exporter
  // planned (inputSize()), and `count` is their product. The outputs then
  // have the sizes this run produces (outputSize()). An input the model was
  // exported with as static takes only its own shape (refused otherwise);
  // in a dynamic one, the runtime checks each size against the largest only,
  // so a dimension the exporter kept static (the 3 of [batch, 3]) must keep
  // its size: nothing checks it.
  template <typename T>
  bool setInput(
      size_t index,
      const T* data,
      size_t count,
      const size_t* shape,
      size_t dims) {
    if (shape == nullptr) {
      if (index < kMaxInputs) {
        inputs_set_ &= ~(1u << index);
      }
      return failText("setInput: shape is null");
    }
    return bindInput(
        index, dtypeOf<T>(), const_cast<T*>(data), count, shape, dims);
  }
  bool setInput(
      size_t index,
      const float* data,
      size_t count,
      const size_t* shape,
      size_t dims) {
    return setInput<float>(index, data, count, shape, dims);
  }

  // Runs the method once. Every tensor input must have been set. An input
  // the exporter planned memory for is copied when setInput() is called, not
  // when run() is: call setInput() again whenever its values change (a loop()
  // that refills a sensor buffer sets it before every run()). On failure
  // output() returns nullptr until a run() succeeds.
  bool run() {
    ran_ = Ran::kFailed;
    if (!method_) {
      return failText("run: call begin() first");
    }
    for (size_t i = 0; i < method_->inputs_size(); i++) {
      if (isTensorInput(i) &&
          (i >= kMaxInputs || (inputs_set_ & (1u << i)) == 0)) {
        snprintf(
            error_,
            sizeof(error_),
            "run: input %lu not set; call setInput(%lu, ...) first",
            static_cast<unsigned long>(i),
            static_cast<unsigned long>(i));
        return false;
      }
    }
    const et_timestamp_t start = et_pal_current_ticks();
    const auto status = method_->execute();
    const et_timestamp_t end = et_pal_current_ticks();
    if (status != Error::Ok) {
      return failCall("execute", status);
    }
    // One tick is one microsecond: the library's platform layer counts
    // micros() (src/executorch/runtime/platform/default/arduino_pal.cpp).
    last_run_us_ = static_cast<unsigned long>(end - start);
    ran_ = Ran::kOk;
    return true;
  }

  // Microseconds the last successful run() took (the runtime's clock, which
  // is micros() in this library's platform layer); 0 before any. A failed
  // run() leaves it unchanged.
  unsigned long lastRunMicros() const {
    return last_run_us_;
  }

  // Data of output `index`, float (output(0)) or T (output<int8_t>(0)):
  // what the last run() computed, valid until the next run(). nullptr if the
  // last run() failed (error() keeps its reason) or there was none, if there
  // is no such output, or if its dtype is not T's.
  const float* output(size_t index = 0) {
    return output<float>(index);
  }
  template <typename T>
  const T* output(size_t index = 0) {
    if (ran_ != Ran::kOk) {
      if (ran_ == Ran::kNever) {
        failText("output: call run() first");
      }
      return nullptr;
    }
    const executorch::aten::Tensor* tensor = outputTensor("output", index);
    if (tensor == nullptr) {
      return nullptr;
    }
    if (tensor->scalar_type() != dtypeOf<T>()) {
      failType("output", "output", index, tensor->scalar_type(), dtypeOf<T>());
      return nullptr;
    }
    return tensor->const_data_ptr<T>();
  }

  // Position of the largest value of output `index` (a classifier's answer),
  // for float32, int8 and uint8 outputs; -1 if output(index) would be
  // nullptr, the output is empty or of another dtype.
  int argmax(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor("argmax", index);
    if (tensor == nullptr) {
      return -1;
    }
    switch (tensor->scalar_type()) {
      case DType::Float:
        return argmaxOf(output<float>(index), outputCount(index));
      case DType::Char:
        return argmaxOf(output<int8_t>(index), outputCount(index));
      case DType::Byte:
        return argmaxOf(output<uint8_t>(index), outputCount(index));
      default:
        failType("argmax", "output", index, tensor->scalar_type(), DType::Float);
        return -1;
    }
  }

  // Number of inputs and outputs of the method (tensors or not); 0 before a
  // successful begin().
  size_t numInputs() const {
    return method_ ? method_->inputs_size() : 0;
  }
  size_t numOutputs() const {
    return method_ ? method_->outputs_size() : 0;
  }

  // Shape and dtype of tensor input `index`, from the model: number of
  // dimensions, size of dimension `dim`, number of elements, dtype. 0 (or
  // DType::Undefined) if there is no such tensor input; error() says why.
  size_t inputDims(size_t index) {
    auto info = inputInfo("inputDims", index);
    return info.ok() ? info->sizes().size() : 0;
  }
  size_t inputSize(size_t index, size_t dim) {
    auto info = inputInfo("inputSize", index);
    if (!info.ok()) {
      return 0;
    }
    if (dim >= info->sizes().size()) {
      failIndex("inputSize", "dim", dim, info->sizes().size());
      return 0;
    }
    return static_cast<size_t>(info->sizes()[dim]);
  }
  size_t inputCount(size_t index) {
    auto info = inputInfo("inputCount", index);
    if (!info.ok()) {
      return 0;
    }
    size_t count = 1;
    for (size_t d = 0; d < info->sizes().size(); d++) {
      count *= static_cast<size_t>(info->sizes()[d]);
    }
    return count;
  }
  DType inputType(size_t index) {
    auto info = inputInfo("inputType", index);
    return info.ok() ? info->scalar_type() : DType::Undefined;
  }

  // The same for tensor output `index`, from the output tensor itself (after
  // a run(), the sizes that run produced).
  size_t outputDims(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor("outputDims", index);
    return tensor ? static_cast<size_t>(tensor->dim()) : 0;
  }
  size_t outputSize(size_t index, size_t dim) {
    const executorch::aten::Tensor* tensor = outputTensor("outputSize", index);
    if (tensor == nullptr) {
      return 0;
    }
    if (dim >= static_cast<size_t>(tensor->dim())) {
      failIndex("outputSize", "dim", dim, static_cast<size_t>(tensor->dim()));
      return 0;
    }
    return static_cast<size_t>(tensor->size(static_cast<ssize_t>(dim)));
  }
  size_t outputCount(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor("outputCount", index);
    return tensor ? static_cast<size_t>(tensor->numel()) : 0;
  }
  DType outputType(size_t index = 0) {
    const executorch::aten::Tensor* tensor = outputTensor("outputType", index);
    return tensor ? tensor->scalar_type() : DType::Undefined;
  }

  // PyTorch's name of a dtype ("float32", "int8", "uint8", ...), "other"
  // for the ones ETModel does not read or write.
  static const char* dtypeName(DType type) {
    switch (type) {
      case DType::Float:
        return "float32";
      case DType::Double:
        return "float64";
      case DType::Char:
        return "int8";
      case DType::Byte:
        return "uint8";
      case DType::Short:
        return "int16";
      case DType::Int:
        return "int32";
      case DType::Long:
        return "int64";
      case DType::Bool:
        return "bool";
      default:
        return "other";
    }
  }

  // The enumerator's name of an executorch::runtime::Error
  // ("MemoryAllocationFailed"), or "Unknown" for a code this table does not
  // know. Written by code, not by name, so that it compiles against every
  // ref's error.h; tests/tools/test_etmodel_api.py checks it against error.h.
  static const char* errorName(Error status) {
    switch (static_cast<uint32_t>(status)) {
      case 0x00: return "Ok";
      case 0x01: return "Internal";
      case 0x02: return "InvalidState";
      case 0x03: return "EndOfMethod";
      case 0x04: return "AlreadyLoaded";
      case 0x10: return "NotSupported";
      case 0x11: return "NotImplemented";
      case 0x12: return "InvalidArgument";
      case 0x13: return "InvalidType";
      case 0x14: return "OperatorMissing";
      case 0x15: return "RegistrationExceedingMaxKernels";
      case 0x16: return "RegistrationAlreadyRegistered";
      case 0x20: return "NotFound";
      case 0x21: return "MemoryAllocationFailed";
      case 0x22: return "AccessFailed";
      case 0x23: return "InvalidProgram";
      case 0x24: return "InvalidExternalData";
      case 0x25: return "OutOfResources";
      case 0x30: return "DelegateInvalidCompatibility";
      case 0x31: return "DelegateMemoryAllocationFailed";
      case 0x32: return "DelegateInvalidHandle";
      default: return "Unknown";
    }
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
  using TensorInfoResult =
      executorch::runtime::Result<executorch::runtime::TensorInfo>;
  static constexpr size_t kMaxInputs = 4;
  static constexpr size_t kMaxDims = 8;

  // A bump allocator that remembers how far it has bumped: the end of the
  // last allocation minus the base, which is what MemoryAllocator::used_size()
  // returns where it exists (d756e7d8c2, v1.4.1, main). v1.3.x and older lack
  // it, and the generator takes any ref, so count here instead. It also
  // remembers the end the first refused allocation would have reached: the
  // least the arena must hold.
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
      } else if (needed_ == 0) {
        needed_ = used_ + size;
      }
      return block;
    }

    size_t used() const {
      return used_;
    }

    // 0 until an allocation fails; then the bytes it would have needed.
    size_t needed() const {
      return needed_;
    }

    void reset() override {
      MemoryAllocator::reset();
      used_ = 0;
      needed_ = 0;
    }

   private:
    size_t used_ = 0;
    size_t needed_ = 0;
  };

  // The ScalarType of the C type T, by size and signedness (int32_t is long
  // on arm-none-eabi and int on the host; both are Int). Plain char is
  // refused: its signedness differs between the board and the host.
  template <typename T>
  static constexpr DType dtypeOf() {
    using U = std::remove_cv_t<T>;
    static_assert(
        (std::is_arithmetic<U>::value && !std::is_same<U, char>::value &&
         !std::is_same<U, long double>::value &&
         (!std::is_floating_point<U>::value || sizeof(U) == 4 ||
          sizeof(U) == 8) &&
         (!std::is_unsigned<U>::value || sizeof(U) == 1 ||
          std::is_same<U, bool>::value)),
        "ETModel: data must be float, double, int8_t, uint8_t, int16_t, "
        "int32_t, int64_t or bool");
    if (std::is_same<U, bool>::value) {
      return DType::Bool;
    }
    if (std::is_floating_point<U>::value) {
      return sizeof(U) == 4 ? DType::Float : DType::Double;
    }
    if (std::is_unsigned<U>::value) {
      return DType::Byte;
    }
    switch (sizeof(U)) {
      case 1:
        return DType::Char;
      case 2:
        return DType::Short;
      case 4:
        return DType::Int;
      default:
        return DType::Long;
    }
  }

  template <typename T>
  int argmaxOf(const T* values, size_t count) {
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

  // `shape`, `shape_dims`: the sizes to bind (a dynamic-shape model), or
  // nullptr for the sizes the exporter planned.
  bool bindInput(
      size_t index,
      DType type,
      void* data,
      size_t count,
      const size_t* shape = nullptr,
      size_t shape_dims = 0) {
    if (index < kMaxInputs) {
      inputs_set_ &= ~(1u << index);
    }
    if (data == nullptr) {
      snprintf(
          error_,
          sizeof(error_),
          "setInput: input %lu data is null",
          static_cast<unsigned long>(index));
      return false;
    }
    auto info = inputInfo("setInput", index);
    if (!info.ok()) {
      return false;
    }
    if (info->scalar_type() != type) {
      return failType("setInput", "input", index, info->scalar_type(), type);
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
    if (shape != nullptr && shape_dims != dims) {
      snprintf(
          error_,
          sizeof(error_),
          "setInput: input %lu has %lu dims, the shape given has %lu",
          static_cast<unsigned long>(index),
          static_cast<unsigned long>(dims),
          static_cast<unsigned long>(shape_dims));
      return false;
    }
    size_t expected = 1;
    for (size_t d = 0; d < dims; d++) {
      const size_t planned = static_cast<size_t>(info->sizes()[d]);
      const size_t size = shape != nullptr ? shape[d] : planned;
      if (size > planned) {
        snprintf(
            error_,
            sizeof(error_),
            "setInput: input %lu dim %lu is %lu, at most %lu (the largest the "
            "exporter planned)",
            static_cast<unsigned long>(index),
            static_cast<unsigned long>(d),
            static_cast<unsigned long>(size),
            static_cast<unsigned long>(planned));
        return false;
      }
      sizes_[index][d] = static_cast<SizesType>(size);
      dim_order_[index][d] = static_cast<DimOrderType>(info->dim_order()[d]);
      expected *= size;
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
        type,
        static_cast<ssize_t>(dims),
        sizes_[index],
        data,
        dim_order_[index],
        strides_[index]);
    tensors_[index].emplace(&*impls_[index]);
    const auto status = method_->set_input(
        executorch::runtime::EValue(*tensors_[index]), index);
    if (status != Error::Ok && shape != nullptr) {
      // resize_tensor refuses new sizes for a tensor the exporter made
      // static (runtime/core/exec_aten/util/tensor_util.h).
      failCall("set_input", status);
      const size_t n = strlen(error_);
      snprintf(
          error_ + n,
          sizeof(error_) - n,
          ": input %lu takes only its exported shape (export with dynamic "
          "shapes to vary it)",
          static_cast<unsigned long>(index));
      return false;
    }
    if (status != Error::Ok) {
      return failCall("set_input", status);
    }
    inputs_set_ |= 1u << index;
    return true;
  }

  bool isTensorInput(size_t index) {
    auto tag = method_->method_meta().input_tag(index);
    return tag.ok() && tag.get() == executorch::runtime::Tag::Tensor;
  }

  // The model's description of tensor input `index`, or an error (and its
  // reason in error_) when there is no such input an ETModel can set.
  TensorInfoResult inputInfo(const char* call, size_t index) {
    if (!method_) {
      snprintf(error_, sizeof(error_), "%s: call begin() first", call);
      return Error::InvalidState;
    }
    const size_t limit = method_->inputs_size() < kMaxInputs
        ? method_->inputs_size()
        : kMaxInputs;
    if (index >= limit) {
      failIndex(call, "input", index, limit);
      return Error::InvalidArgument;
    }
    if (!isTensorInput(index)) {
      snprintf(
          error_,
          sizeof(error_),
          "%s: input %lu is not a tensor",
          call,
          static_cast<unsigned long>(index));
      return Error::InvalidArgument;
    }
    auto info = method_->method_meta().input_tensor_meta(index);
    if (!info.ok()) {
      failCall("input_tensor_meta", info.error());
    }
    return info;
  }

  const executorch::aten::Tensor* outputTensor(const char* call, size_t index) {
    if (!method_) {
      snprintf(error_, sizeof(error_), "%s: call begin() first", call);
      return nullptr;
    }
    if (index >= method_->outputs_size()) {
      failIndex(call, "output", index, method_->outputs_size());
      return nullptr;
    }
    const executorch::runtime::EValue& value = method_->get_output(index);
    if (!value.isTensor()) {
      snprintf(
          error_,
          sizeof(error_),
          "%s: output %lu is not a tensor",
          call,
          static_cast<unsigned long>(index));
      return nullptr;
    }
    return &value.toTensor();
  }

  // "<call>: <ErrorName> (0x<code>)", then what to do about it where this
  // class knows.
  bool failCall(const char* call, Error status) {
    const int n = snprintf(
        error_,
        sizeof(error_),
        "%s: %s (0x%02lx)",
        call,
        errorName(status),
        static_cast<unsigned long>(status));
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(error_)) {
      return false;
    }
    char* rest = error_ + n;
    const size_t room = sizeof(error_) - static_cast<size_t>(n);
    // The runtime logged "Missing operator: [i] name" just before returning
    // OperatorMissing (Method::init, runtime/executor/method.cpp).
    const char* logged = et_arduino_missing_operator();
    const char* op = strstr(logged, "] ");
    if (status == Error::OperatorMissing && op != nullptr &&
        et_arduino_kernels_fell_back()) {
      snprintf(
          rest,
          room,
          ": %s not registered: model.h selects no kernels (an old or "
          "another tool's); write it with this library's pte_to_header.py",
          op + 2);
    } else if (status == Error::OperatorMissing && op != nullptr) {
      snprintf(
          rest,
          room,
          ": %s not registered (not in model.h's selection or this "
          "library; check_models.py tells)",
          op + 2);
    } else if (status == Error::MemoryAllocationFailed) {
      tooSmall(rest, room, arena_.needed());
    } else if (status == Error::InvalidProgram && !method_) {
      snprintf(rest, room, ": not a .pte this runtime reads; re-export it");
    }
    return false;
  }

  // ": the N-byte arena is too small, needs at least M B (...)" at `out`.
  void tooSmall(char* out, size_t room, size_t needed) {
    const int n = snprintf(
        out,
        room,
        ": the %lu-byte arena is too small",
        static_cast<unsigned long>(arena_.size()));
    if (needed > arena_.size() && n > 0 && static_cast<size_t>(n) < room) {
      snprintf(
          out + n,
          room - static_cast<size_t>(n),
          ", needs at least %lu B (model.h: *_arena_bytes)",
          static_cast<unsigned long>(needed));
    }
  }

  // The memory plan did not fit: `planned` is what it takes on its own.
  bool failArena(const char* call, size_t planned) {
    const size_t needed =
        planned > arena_.needed() ? planned : arena_.needed();
    const int n = snprintf(
        error_,
        sizeof(error_),
        "%s: %s (0x%02lx)",
        call,
        errorName(Error::MemoryAllocationFailed),
        static_cast<unsigned long>(Error::MemoryAllocationFailed));
    if (n > 0 && static_cast<size_t>(n) < sizeof(error_)) {
      tooSmall(error_ + n, sizeof(error_) - static_cast<size_t>(n), needed);
    }
    return false;
  }

  bool failType(
      const char* call,
      const char* what,
      size_t index,
      DType model,
      DType given) {
    snprintf(
        error_,
        sizeof(error_),
        "%s: %s %lu is %s, not %s",
        call,
        what,
        static_cast<unsigned long>(index),
        dtypeName(model),
        dtypeName(given));
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
  uint32_t inputs_set_ = 0;  // bit i: input i bound by a successful setInput
  enum class Ran : uint8_t { kNever, kOk, kFailed };
  Ran ran_ = Ran::kNever;  // how the last run() went

  std::optional<executorch::aten::TensorImpl> impls_[kMaxInputs];
  std::optional<executorch::aten::Tensor> tensors_[kMaxInputs];
  SizesType sizes_[kMaxInputs][kMaxDims] = {};
  DimOrderType dim_order_[kMaxInputs][kMaxDims] = {};
  StridesType strides_[kMaxInputs][kMaxDims] = {};

  char error_[192] = {};
};
