/// A JSON Schema, built from the keywords that draft-07 (OpenRPC 1.3's dialect) and 2020-12 (MCP's
/// default) read alike: `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`,
/// `pattern`, lengths, bounds and `anyOf`. Every schema is self-contained (no `$ref`), so a method's
/// params schema can be handed to an MCP client as its tool's `inputSchema` as is.
public struct JSONSchema: Sendable, Equatable, JSONRepresentable {
  public let json: JSONValue

  public init(json: JSONValue) {
    self.json = json
  }

  public func write(to writer: inout JSONWriter) {
    writer.write(json)
  }

  /// A string; `values` makes it an enum.
  public static func string(
    _ description: String? = nil, pattern: String? = nil, values: [String]? = nil, minLength: Int? = nil,
    maxLength: Int? = nil
  ) -> JSONSchema {
    var schema = JSONObjectBuilder()
    schema.set("type", "string")
    schema.set("description", description)
    schema.set("enum", values.map { .array($0.map(JSONValue.string)) })
    schema.set("pattern", pattern)
    if let minLength { schema.set("minLength", minLength) }
    if let maxLength { schema.set("maxLength", maxLength) }
    return JSONSchema(json: schema.value)
  }

  /// A string that must be exactly `value`.
  public static func constant(_ value: String, _ description: String? = nil) -> JSONSchema {
    string(description, values: [value])
  }

  public static func boolean(_ description: String? = nil) -> JSONSchema {
    var schema = JSONObjectBuilder()
    schema.set("type", "boolean")
    schema.set("description", description)
    return JSONSchema(json: schema.value)
  }

  public static func integer(_ description: String? = nil, minimum: Int? = nil, maximum: Int? = nil) -> JSONSchema {
    var schema = JSONObjectBuilder()
    schema.set("type", "integer")
    schema.set("description", description)
    if let minimum { schema.set("minimum", minimum) }
    if let maximum { schema.set("maximum", maximum) }
    return JSONSchema(json: schema.value)
  }

  public static func array(
    _ items: JSONSchema, _ description: String? = nil, minItems: Int? = nil, maxItems: Int? = nil
  ) -> JSONSchema {
    var schema = JSONObjectBuilder()
    schema.set("type", "array")
    schema.set("description", description)
    schema.set("items", items.json)
    if let minItems { schema.set("minItems", minItems) }
    if let maxItems { schema.set("maxItems", maxItems) }
    return JSONSchema(json: schema.value)
  }

  /// An object with `properties` in this order. `closed` objects reject other members (payservice's
  /// params and results); open ones allow them (Apple's shapes, which grow over time).
  public static func object(
    _ description: String? = nil, _ properties: [(String, JSONSchema)], required: [String] = [],
    closed: Bool = true
  ) -> JSONSchema {
    var members = JSONObjectBuilder(capacity: properties.count)
    for (name, schema) in properties { members.set(name, schema.json) }
    var schema = JSONObjectBuilder()
    schema.set("type", "object")
    schema.set("description", description)
    schema.set("properties", members.value)
    if !required.isEmpty { schema.set("required", .array(required.map(JSONValue.string))) }
    if closed { schema.set("additionalProperties", false) }
    return JSONSchema(json: schema.value)
  }

  public static func object(_ properties: [(String, JSONSchema)], required: [String] = [], closed: Bool = true)
    -> JSONSchema
  {
    object(nil, properties, required: required, closed: closed)
  }

  /// Any one of `schemas`.
  public static func anyOf(_ description: String? = nil, _ schemas: [JSONSchema]) -> JSONSchema {
    var schema = JSONObjectBuilder()
    schema.set("description", description)
    schema.set("anyOf", .array(schemas.map(\.json)))
    return JSONSchema(json: schema.value)
  }

  /// This object schema with one of several variants: each variant is told apart by the string value
  /// of one member and requires its own members (`oneOf`).
  public func requiring(oneOf variants: [(member: String, value: String, required: [String])]) -> JSONSchema {
    guard case .object(var object) = json else { preconditionFailure("requiring(oneOf:) needs an object schema") }
    let alternatives: [JSONValue] = variants.map { variant in
      var tag = JSONObjectBuilder()
      tag.set(variant.member, JSONSchema.constant(variant.value).json)
      var alternative = JSONObjectBuilder()
      alternative.set("properties", tag.value)
      alternative.set("required", .array(variant.required.map(JSONValue.string)))
      return alternative.value
    }
    object.members.append((key: "oneOf", value: .array(alternatives)))
    return JSONSchema(json: .object(object))
  }

  /// An object that is one of several variants told apart by the string value of its `tag` member:
  /// every variant's members, in order of first appearance (the tag as an enum of the values),
  /// requiring the members all variants require, and each variant's own required members (`oneOf`).
  public static func variants(tag: String, _ variants: [(value: String, members: [ObjectMember])]) -> JSONSchema {
    var properties: [(String, JSONSchema)] = [(tag, .string(values: variants.map(\.value)))]
    for variant in variants {
      for member in variant.members where !properties.contains(where: { $0.0 == member.name }) {
        properties.append((member.name, member.schema))
      }
    }
    let required = properties.map(\.0).filter { name in
      variants.allSatisfy { variant in variant.members.contains { $0.name == name && $0.required } }
    }
    return object(properties, required: required).requiring(
      oneOf: variants.map { variant in
        (tag, variant.value, variant.members.filter { $0.required && $0.name != tag }.map(\.name))
      })
  }

  /// This schema, or JSON null as well (`"type": [type, "null"]`).
  public func allowingNull() -> JSONSchema {
    guard case .object(var object) = json, let index = object.members.firstIndex(where: { $0.key == "type" }),
      case .string(let type) = object.members[index].value
    else { preconditionFailure("allowingNull() needs a schema with one type") }
    object.members[index].value = .array([.string(type), .string("null")])
    // An enum lists its values, so null must be one of them too.
    if let values = object.members.firstIndex(where: { $0.key == "enum" }), case .array(let list) = object.members[values].value {
      object.members[values].value = .array(list + [.null])
    }
    return JSONSchema(json: .object(object))
  }
}
