/// How a member of an object may be absent or null, on both sides of the wire.
public enum Presence: Sendable {
  /// Always there, never null.
  case required
  /// May be left out: an optional value is then nil (and written only when it has one); any other
  /// value keeps its default (and is always written). Null is not accepted for it.
  case optional
  /// May be left out or null, both meaning "none" (the sheet sends null for cleared fields).
  case optionalOrNull
  /// Always there; null when there is none.
  case alwaysOrNull

  /// Whether the schema lists the member as required.
  var isRequired: Bool { self == .required || self == .alwaysOrNull }
  /// Whether null is accepted for the member (and the schema says so).
  var allowsNull: Bool { self == .optionalOrNull || self == .alwaysOrNull }
}

/// Reads one member's present value; nil after reporting to the reader.
public typealias MemberReader<Value> = @Sendable (JSONValue, () -> String, ParamReader) -> Value?

/// One member of an object on the wire: its name, presence and schema, how to read it into the
/// object being built and how to write it from a finished one.
public struct Field<Root>: Sendable {
  let key: String
  let staticKey: StaticString
  let presence: Presence
  /// The member's schema before `presence` allows null. Built only when a document asks
  /// (rpc.discover, tools/list), never per request.
  let schema: @Sendable () -> JSONSchema
  let read: @Sendable (JSONValue, () -> String, ParamReader, inout Root) -> Void
  let write: @Sendable (Root, inout JSONWriter) -> Void
  /// Whether the member is written for `root`: false for an optional member without a value, and
  /// for members that are read but never written.
  let isWritten: @Sendable (Root) -> Bool

  /// A member of non-optional type: `.required`, or `.optional` to keep the blank's value when it
  /// is left out. `read` and `write` replace the type's own when the member is read or written
  /// differently (a catalog check, a normalized form); `written: false` reads it and never writes it.
  public static func member<Value: WireValue>(
    _ name: StaticString, _ keyPath: WritableKeyPath<Root, Value> & Sendable, _ presence: Presence = .required,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema = Value.schema, read: MemberReader<Value>? = nil,
    write: (@Sendable (Value, inout JSONWriter) -> Void)? = nil
  ) -> Field {
    precondition(presence == .required || presence == .optional, "\(name): a non-optional member cannot be null")
    let reading = read ?? { value, path, reader in Value.read(value, at: path, reader: reader) }
    let writing = write ?? { value, writer in value.write(to: &writer) }
    return Field(
      key: "\(name)", staticKey: name, presence: presence, schema: schema,
      read: { value, path, reader, root in
        if let read = reading(value, path, reader) { root[keyPath: keyPath] = read }
      },
      write: { root, writer in writing(root[keyPath: keyPath], &writer) },
      isWritten: { _ in true })
  }

  /// A required member with its own schema.
  public static func member<Value: WireValue>(
    _ name: StaticString, _ keyPath: WritableKeyPath<Root, Value> & Sendable,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema, read: MemberReader<Value>? = nil,
    write: (@Sendable (Value, inout JSONWriter) -> Void)? = nil
  ) -> Field {
    member(name, keyPath, .required, schema(), read: read, write: write)
  }

  /// A member of optional type; `presence` says whether it may be left out or null (`.required`: it
  /// must be sent, and is written when it has a value).
  public static func member<Value: WireValue>(
    _ name: StaticString, _ keyPath: WritableKeyPath<Root, Value?> & Sendable, _ presence: Presence,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema = Value.schema, read: MemberReader<Value>? = nil,
    write: (@Sendable (Value, inout JSONWriter) -> Void)? = nil, written: Bool = true
  ) -> Field {
    let reading = read ?? { value, path, reader in Value.read(value, at: path, reader: reader) }
    let writing = write ?? { value, writer in value.write(to: &writer) }
    return Field(
      key: "\(name)", staticKey: name, presence: presence, schema: schema,
      read: { value, path, reader, root in root[keyPath: keyPath] = reading(value, path, reader) },
      write: { root, writer in
        if let value = root[keyPath: keyPath] { writing(value, &writer) } else { writer.writeNull() }
      },
      isWritten: { root in written && (presence == .alwaysOrNull || root[keyPath: keyPath] != nil) })
  }

  /// A member whose value is fixed: a result's `status` in one of its variants.
  public static func constant(_ name: StaticString, _ value: String) -> Field {
    Field(
      key: "\(name)", staticKey: name, presence: .required, schema: { .constant(value) },
      read: { member, path, reader, _ in
        if member != .string(value) { reader.fail(path(), "must be \"\(value)\"") }
      },
      write: { _, writer in writer.write(value) },
      isWritten: { _ in true })
  }
}

/// An object on the wire, described once: its fields in the order they are written and listed in
/// the schema. Params, results and stored documents are read, written and described from it.
public struct ObjectShape<Root>: Sendable {
  let description: String?
  let fields: [Field<Root>]
  /// Whether members not in `fields` are rejected (payservice's own shapes) or ignored (Apple's,
  /// which grow over time).
  let closed: Bool
  /// Where reading starts: optional members nil, defaulted ones at their default. Required members
  /// are overwritten, or reading fails.
  let blank: @Sendable () -> Root
  /// The member names in order, for unknown-member messages and lookups.
  let keys: [String]
  /// A check across members, run once every field has read without a problem.
  let check: (@Sendable (Root, ParamReader) -> Void)?
  /// The field indices in the order they are read and their problems reported.
  let readingOrder: [Int]

  /// - Parameter readingOrder: the member names in the order problems are reported, when that
  ///   differs from the written order (a published order clients may match on); nil: field order.
  public init(
    _ description: String? = nil, closed: Bool = true, blank: @escaping @Sendable () -> Root,
    _ fields: [Field<Root>], readingOrder: [String]? = nil, check: (@Sendable (Root, ParamReader) -> Void)? = nil
  ) {
    self.description = description
    self.fields = fields
    self.closed = closed
    self.blank = blank
    let keys = fields.map(\.key)
    self.keys = keys
    self.check = check
    let order = readingOrder.map { $0.map { keys.firstIndex(of: $0)! } } ?? Array(keys.indices)
    precondition(order.sorted() == Array(keys.indices), "readingOrder names every field once")
    self.readingOrder = order
  }

  /// The object's schema: closed or open as read, null allowed where the presence accepts it.
  public var schema: JSONSchema { schema(description: description, closed: closed, allowingNull: true) }

  /// The schema with another description or openness; `allowingNull: false` describes what
  /// payservice writes (no nulls for members it leaves out instead).
  public func schema(description: String?, closed: Bool, allowingNull: Bool) -> JSONSchema {
    .object(
      description,
      fields.map { field in
        (field.key, allowingNull && field.presence.allowsNull ? field.schema().allowingNull() : field.schema())
      },
      required: fields.filter(\.presence.isRequired).map(\.key), closed: closed)
  }

  /// Each member as a named param: how OpenRPC lists a method's params.
  public var members: [ObjectMember] {
    fields.map { field in
      ObjectMember(
        name: field.key, required: field.presence.isRequired,
        schema: field.presence.allowsNull ? field.schema().allowingNull() : field.schema())
    }
  }

  public func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Root? {
    guard case .object(let object) = value else {
      reader.fail(path(), "must be an object, got \(value.kindName)")
      return nil
    }
    return read(object, at: path, reader: reader)
  }

  /// Reads every field of `object`, reporting unknown members (of a closed shape) first, then each
  /// field's problems in field order. A repeated member counts once, with its last value.
  public func read(_ object: JSONObject, at path: () -> String, reader: ParamReader) -> Root? {
    let before = reader.errors.count
    let members = object.members
    var root = blank()
    withUnsafeTemporaryAllocation(of: Int.self, capacity: fields.count) { position in
      position.initialize(repeating: -1)
      // One pass from the end finds each field's last member.
      var unknown = false
      for index in members.indices.reversed() {
        if let field = keys.firstIndex(of: members[index].key) {
          if position[field] < 0 { position[field] = index }
        } else {
          unknown = true
        }
      }
      if unknown && closed { reader.rejectUnknown(object, path(), allowed: keys) }
      for index in readingOrder {
        let field = fields[index]
        func memberPath() -> String { ParamReader.join(path(), field.key) }
        guard position[index] >= 0 else {
          if field.presence.isRequired { reader.fail(memberPath(), "is required") }
          continue
        }
        let value = members[position[index]].value
        if case .null = value, field.presence.allowsNull { continue }
        field.read(value, memberPath, reader, &root)
      }
    }
    if let check, reader.errors.count == before { check(root, reader) }
    return reader.errors.count == before ? root : nil
  }

  public func write(_ root: Root, to writer: inout JSONWriter) {
    writer.beginObject()
    for field in fields where field.isWritten(root) {
      writer.key(field.staticKey)
      field.write(root, &writer)
    }
    writer.endObject()
  }
}

/// One member of an object schema.
public struct ObjectMember: Sendable {
  public var name: String
  public var required: Bool
  public var schema: JSONSchema
}

/// A type written, read and described by its `ObjectShape`.
public protocol WireObject: WireValue {
  static var shape: ObjectShape<Self> { get }
}

extension WireObject {
  public static var schema: JSONSchema { shape.schema }

  public static func read(_ value: JSONValue, at path: () -> String, reader: ParamReader) -> Self? {
    shape.read(value, at: path, reader: reader)
  }

  public func write(to writer: inout JSONWriter) {
    Self.shape.write(self, to: &writer)
  }
}
