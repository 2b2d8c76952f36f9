#include "engine/duckdb/variant_columns.h"

#include "common/strings.h"
#include "duckdb/common/vector_operations/vector_operations.hpp"
#include "duckdb/planner/expression/bound_function_expression.hpp"
#include "engine/duckdb/errors.h"
#include "engine/duckdb/type_mapping.h"
#include "engine/functions.h"

namespace basin::engine::duckdb_ext {

namespace {

using duckdb::idx_t;

bool IsVariant(const delta::DataType& type) {
  return type.kind == delta::DataType::Kind::kPrimitive && type.primitive == "variant";
}

struct DecodeBindData : public duckdb::FunctionData {
  DecodeBindData(delta::DataTypePtr type_p, bool column_mapping_p)
      : type(std::move(type_p)), column_mapping(column_mapping_p) {}
  delta::DataTypePtr type;
  bool column_mapping;

  duckdb::unique_ptr<duckdb::FunctionData> Copy() const override {
    return duckdb::make_uniq<DecodeBindData>(type, column_mapping);
  }
  bool Equals(const duckdb::FunctionData& other) const override {
    const auto& o = other.Cast<DecodeBindData>();
    return type == o.type && column_mapping == o.column_mapping;
  }
};

// The field of `stored` (a struct type) that holds `field`, or -1.
int64_t FindField(const duckdb::LogicalType& stored, const delta::StructField& field, bool column_mapping) {
  const std::string name = column_mapping ? field.PhysicalName() : field.name;
  const auto& children = duckdb::StructType::GetChildTypes(stored);
  for (idx_t i = 0; i < children.size(); i++) {
    if (children[i].first == name) return static_cast<int64_t>(i);
  }
  for (idx_t i = 0; i < children.size(); i++) {
    if (EqualsIgnoreCase(children[i].first, name)) return static_cast<int64_t>(i);
  }
  return -1;
}

// Converts `count` rows of the flat vector `in` into `out` (of `type`'s logical type).
void Convert(duckdb::Vector& in, duckdb::Vector& out, const delta::DataType& type, bool column_mapping, idx_t count) {
  if (IsVariant(type)) {
    if (in.GetType().id() != duckdb::LogicalTypeId::STRUCT) {
      duckdb::VectorOperations::DefaultCast(in, out, count);
      return;
    }
    Status st = VariantVectorToJson(reinterpret_cast<duckdb_vector>(&in), count, reinterpret_cast<duckdb_vector>(&out));
    if (!st.ok()) ThrowStatus(st);
    return;
  }
  if (!ContainsVariant(type)) {
    if (in.GetType() == out.GetType()) {
      out.Reference(in);
    } else {
      duckdb::VectorOperations::DefaultCast(in, out, count);
    }
    return;
  }
  out.SetVectorType(duckdb::VectorType::FLAT_VECTOR);
  duckdb::FlatVector::Validity(out).Initialize(duckdb::FlatVector::Validity(in));
  switch (type.kind) {
    case delta::DataType::Kind::kStruct: {
      auto& in_children = duckdb::StructVector::GetEntries(in);
      auto& out_children = duckdb::StructVector::GetEntries(out);
      for (idx_t i = 0; i < type.struct_type.fields.size(); i++) {
        const delta::StructField& field = type.struct_type.fields[i];
        int64_t source = FindField(in.GetType(), field, column_mapping);
        if (source < 0) {
          out_children[i]->SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
          duckdb::ConstantVector::SetNull(*out_children[i], true);
          out_children[i]->Flatten(count);
          continue;
        }
        Convert(*in_children[source], *out_children[i], *field.type, column_mapping, count);
      }
      return;
    }
    case delta::DataType::Kind::kArray:
    case delta::DataType::Kind::kMap: {
      idx_t size = duckdb::ListVector::GetListSize(in);
      auto* in_entries = duckdb::FlatVector::GetData<duckdb::list_entry_t>(in);
      auto* out_entries = duckdb::FlatVector::GetData<duckdb::list_entry_t>(out);
      for (idx_t row = 0; row < count; row++) out_entries[row] = in_entries[row];
      duckdb::ListVector::Reserve(out, size);
      duckdb::Vector& in_child = duckdb::ListVector::GetEntry(in);
      duckdb::Vector& out_child = duckdb::ListVector::GetEntry(out);
      in_child.Flatten(size);
      if (type.kind == delta::DataType::Kind::kArray) {
        Convert(in_child, out_child, *type.element_type, column_mapping, size);
      } else {
        auto& in_kv = duckdb::StructVector::GetEntries(in_child);
        auto& out_kv = duckdb::StructVector::GetEntries(out_child);
        duckdb::FlatVector::Validity(out_child).Initialize(duckdb::FlatVector::Validity(in_child));
        Convert(*in_kv[0], *out_kv[0], *type.key_type, column_mapping, size);
        Convert(*in_kv[1], *out_kv[1], *type.value_type, column_mapping, size);
      }
      duckdb::ListVector::SetListSize(out, size);
      return;
    }
    case delta::DataType::Kind::kPrimitive:
      break;
  }
  throw duckdb::InternalException("variant decoding reached a primitive that holds no variant");
}

void DecodeFunction(duckdb::DataChunk& args, duckdb::ExpressionState& state, duckdb::Vector& result) {
  const auto& bind = state.expr.Cast<duckdb::BoundFunctionExpression>().bind_info->Cast<DecodeBindData>();
  idx_t count = args.size();
  duckdb::Vector& input = args.data[0];
  input.Flatten(count);
  Convert(input, result, *bind.type, bind.column_mapping, count);
  if (args.AllConstant()) result.SetVectorType(duckdb::VectorType::CONSTANT_VECTOR);
}

}  // namespace

bool ContainsVariant(const delta::DataType& type) {
  switch (type.kind) {
    case delta::DataType::Kind::kPrimitive:
      return IsVariant(type);
    case delta::DataType::Kind::kStruct:
      for (const auto& field : type.struct_type.fields) {
        if (ContainsVariant(*field.type)) return true;
      }
      return false;
    case delta::DataType::Kind::kArray:
      return ContainsVariant(*type.element_type);
    case delta::DataType::Kind::kMap:
      return ContainsVariant(*type.key_type) || ContainsVariant(*type.value_type);
  }
  return false;
}

duckdb::unique_ptr<duckdb::Expression> DecodeVariants(duckdb::unique_ptr<duckdb::Expression> stored,
                                                      delta::DataTypePtr type, bool column_mapping) {
  duckdb::LogicalType target = ToLogicalType(*type);
  duckdb::ScalarFunction function("basin_decode_variants", {stored->return_type}, target, DecodeFunction);
  duckdb::vector<duckdb::unique_ptr<duckdb::Expression>> children;
  children.push_back(std::move(stored));
  return duckdb::make_uniq<duckdb::BoundFunctionExpression>(
      target, std::move(function), std::move(children), duckdb::make_uniq<DecodeBindData>(std::move(type), column_mapping));
}

}  // namespace basin::engine::duckdb_ext
