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

/// The offset of a stored property in its struct: what its key path resolves to. Fields reach
/// their members through it, without the key path machinery (a generic metadata lookup under a
/// lock) on every access, and without copying the object to read one member of it.
func memberOffset<Root, Value>(_ name: StaticString, _ keyPath: WritableKeyPath<Root, Value>) -> Int {
  guard let offset = MemoryLayout<Root>.offset(of: keyPath) else {
    preconditionFailure("member \(name) is not a stored property of \(Root.self)")
  }
  return offset
}

/// Reads one member's present value; nil after reporting to the reader.
public typealias MemberReader<Value> = @Sendable (JSONValue, () -> String, ParamReader) -> Value?

/// One member of an object on the wire: its name, presence and schema, how to read it into the
/// object being built and how to write it from a finished one.
///
/// A class, used in place: its closures keep their own calling convention (in an array of
/// closures every call would go through a reabstraction thunk), and reaching one does not copy
/// the others. The closures are given the member's address, so those of a plain member capture
/// nothing (and cost no reference counting to call).
public final class Field<Root>: Sendable {
  typealias Read = @Sendable (JSONValue, () -> String, ParamReader, UnsafeMutableRawPointer) -> Void
  typealias Write = @Sendable (UnsafeRawPointer, inout JSONWriter) -> Void

  let key: String
  let staticKey: StaticString
  let presence: Presence
  /// Where the member is in its object (0 for a constant, which has no storage).
  let offset: Int
  /// The member's schema before `presence` allows null. Built only when a document asks
  /// (rpc.discover, tools/list), never per request.
  let schema: @Sendable () -> JSONSchema
  /// Reads the member into the object being built (at the member's address).
  let read: Read
  /// Writes the member at the address.
  let write: Write
  /// Whether the member at the address is written: false for an optional member without a value,
  /// and for members that are read but never written; nil for members always written.
  let isWritten: (@Sendable (UnsafeRawPointer) -> Bool)?

  init(
    _ name: StaticString, presence: Presence, offset: Int, schema: @escaping @Sendable () -> JSONSchema,
    read: @escaping Read, write: @escaping Write, isWritten: (@Sendable (UnsafeRawPointer) -> Bool)?
  ) {
    self.key = "\(name)"
    self.staticKey = name
    self.presence = presence
    self.offset = offset
    self.schema = schema
    self.read = read
    self.write = write
    self.isWritten = isWritten
  }

  /// A member of non-optional type: `.required`, or `.optional` to keep the blank's value when it
  /// is left out. `read` and `write` replace the type's own when the member is read or written
  /// differently (a catalog check, a normalized form).
  public static func member<Value: WireValue>(
    _ name: StaticString, _ keyPath: WritableKeyPath<Root, Value> & Sendable, _ presence: Presence = .required,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema = Value.schema, read: MemberReader<Value>? = nil,
    write: (@Sendable (Value, inout JSONWriter) -> Void)? = nil
  ) -> Field {
    precondition(presence == .required || presence == .optional, "\(name): a non-optional member cannot be null")
    let reading: Read
    if let read {
      reading = { value, path, reader, member in
        if let value = read(value, path, reader) { member.assumingMemoryBound(to: Value.self).pointee = value }
      }
    } else {
      reading = { value, path, reader, member in
        if let value = Value.read(value, at: path, reader: reader) {
          member.assumingMemoryBound(to: Value.self).pointee = value
        }
      }
    }
    let writing: Write
    if let write {
      writing = { member, writer in write(member.assumingMemoryBound(to: Value.self).pointee, &writer) }
    } else {
      writing = { member, writer in member.assumingMemoryBound(to: Value.self).pointee.write(to: &writer) }
    }
    return Field(
      name, presence: presence, offset: memberOffset(name, keyPath), schema: schema, read: reading, write: writing,
      isWritten: nil)
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
  /// must be sent, and is written when it has a value). `written: false` reads it and never writes it.
  public static func member<Value: WireValue>(
    _ name: StaticString, _ keyPath: WritableKeyPath<Root, Value?> & Sendable, _ presence: Presence,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema = Value.schema, read: MemberReader<Value>? = nil,
    write: (@Sendable (Value, inout JSONWriter) -> Void)? = nil, written: Bool = true
  ) -> Field {
    let reading: Read
    if let read {
      reading = { value, path, reader, member in
        member.assumingMemoryBound(to: Value?.self).pointee = read(value, path, reader)
      }
    } else {
      reading = { value, path, reader, member in
        member.assumingMemoryBound(to: Value?.self).pointee = Value.read(value, at: path, reader: reader)
      }
    }
    let writing: Write
    if let write {
      writing = { member, writer in
        if let value = member.assumingMemoryBound(to: Value?.self).pointee { write(value, &writer) } else {
          writer.writeNull()
        }
      }
    } else {
      writing = { member, writer in
        if let value = member.assumingMemoryBound(to: Value?.self).pointee { value.write(to: &writer) } else {
          writer.writeNull()
        }
      }
    }
    let isWritten: (@Sendable (UnsafeRawPointer) -> Bool)?
    if !written {
      isWritten = { _ in false }
    } else if presence == .alwaysOrNull {
      isWritten = nil
    } else {
      isWritten = { member in member.assumingMemoryBound(to: Value?.self).pointee != nil }
    }
    return Field(
      name, presence: presence, offset: memberOffset(name, keyPath), schema: schema, read: reading, write: writing,
      isWritten: isWritten)
  }

  /// A member of an optional nested struct stored at `container`, written flat among the root's
  /// own members (Apple's line items carry their payment timing that way). It is written when the
  /// container is there and `get` gives a value; reading sets it with `set` in the container, made
  /// from `blank` by the first of its members read. Keeping such rarely used members in one
  /// optional costs a root without them one check when it is copied, instead of one per member.
  public static func flattened<Container: Sendable, Value: WireValue>(
    _ name: StaticString, in container: WritableKeyPath<Root, Container?> & Sendable,
    blank: @escaping @Sendable () -> Container, get: @escaping @Sendable (Container) -> Value?,
    set: @escaping @Sendable (inout Container, Value) -> Void,
    _ schema: @autoclosure @escaping @Sendable () -> JSONSchema = Value.schema
  ) -> Field {
    Field(
      name, presence: .optional, offset: memberOffset(name, container), schema: schema,
      read: { value, path, reader, member in
        guard let read = Value.read(value, at: path, reader: reader) else { return }
        let slot = member.assumingMemoryBound(to: Container?.self)
        var nested = slot.pointee ?? blank()
        set(&nested, read)
        slot.pointee = nested
      },
      write: { member, writer in
        if let nested = member.assumingMemoryBound(to: Container?.self).pointee, let value = get(nested) {
          value.write(to: &writer)
        }
      },
      isWritten: { member in
        // Compared in place: only a root that has the container pays for reading it.
        let slot = member.assumingMemoryBound(to: Container?.self)
        guard slot.pointee != nil else { return false }
        return get(slot.pointee.unsafelyUnwrapped) != nil
      })
  }

  /// This member as one of an object that stores this member's object `offset` bytes in: the
  /// closures reach members by address, so only the offset moves.
  func moved<Outer>(by offset: Int) -> Field<Outer> {
    Field<Outer>(
      staticKey, presence: presence, offset: self.offset + offset, schema: schema, read: read, write: write,
      isWritten: isWritten)
  }

  /// A member whose value is fixed: a result's `status` in one of its variants.
  public static func constant(_ name: StaticString, _ value: String) -> Field {
    Field(
      name, presence: .required, offset: 0, schema: { .constant(value) },
      read: { member, path, reader, _ in
        if member != .string(value) { reader.fail(path(), "must be \"\(value)\"") }
      },
      write: { _, writer in writer.write(value) },
      isWritten: nil)
  }
}

/// An object on the wire, described once: its fields in the order they are written and listed in
/// the schema. Params, results and stored documents are read, written and described from it.
/// A class: every request uses the shapes, and one reference is cheaper to pass than its members.
public final class ObjectShape<Root>: Sendable {
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
  private let keyLengths: [Int]
  /// The fields, unretained: `fields` keeps them alive as long as the shape, and a request reads
  /// and writes through the shape, so they are used without reference counting (which, on objects
  /// every thread shares, costs more than the rest of a member's writing).
  private let unretainedFields: [Unmanaged<Field<Root>>]

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
    keyLengths = keys.map(\.utf8.count)
    unretainedFields = fields.map { Unmanaged.passUnretained($0) }
  }

  /// The members, as members of another object that keeps this one in its stored property at
  /// `keyPath`: they are read and written flat among its own, in this shape's order. (This
  /// shape's `check` is not part of them.)
  public func fields<Outer>(at keyPath: WritableKeyPath<Outer, Root> & Sendable) -> [Field<Outer>] {
    let offset = memberOffset("(nested)", keyPath)
    return fields.map { $0.moved(by: offset) }
  }

  /// The object's schema: closed or open as read, null allowed where the presence accepts it.
  public var schema: JSONSchema { schema(description: description, closed: closed, allowingNull: true) }

  /// The schema with another description or openness; `allowingNull: false` describes what
  /// payservice writes (no nulls for members it leaves out instead).
  public func schema(description: String?, closed: Bool, allowingNull: Bool) -> JSONSchema {
    let members = members(allowingNull: allowingNull)
    return .object(
      description, members.map { ($0.name, $0.schema) }, required: members.filter(\.required).map(\.name),
      closed: closed)
  }

  /// Each member as a named param: how OpenRPC lists a method's params.
  public var members: [ObjectMember] { members(allowingNull: true) }

  private func members(allowingNull: Bool) -> [ObjectMember] {
    fields.map { field in
      ObjectMember(
        name: field.key, required: field.presence.isRequired,
        schema: allowingNull && field.presence.allowsNull ? field.schema().allowingNull() : field.schema())
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
        if let field = fieldIndex(members[index].key) {
          if position[field] < 0 { position[field] = index }
        } else {
          unknown = true
        }
      }
      if unknown && closed { reader.rejectUnknown(object, path(), allowed: keys) }
      withUnsafeMutableBytes(of: &root) { rootBytes in
        let rootPointer = rootBytes.baseAddress!
        for index in readingOrder {
          unretainedFields[index]._withUnsafeGuaranteedRef { field in
            func memberPath() -> String { FieldPath.join(path(), field.key) }
            guard position[index] >= 0 else {
              if field.presence.isRequired { reader.fail(memberPath(), "is required") }
              return
            }
            if case .null = members[position[index]].value, field.presence.allowsNull { return }
            field.read(members[position[index]].value, memberPath, reader, rootPointer + field.offset)
          }
        }
      }
    }
    if let check, reader.errors.count == before { check(root, reader) }
    return reader.errors.count == before ? root : nil
  }

  /// The field named `key`: compared by UTF-8 length first, since nearly every other name differs in it.
  @inline(__always)
  private func fieldIndex(_ key: String) -> Int? {
    let length = key.utf8.count
    for index in keys.indices where keyLengths[index] == length && keys[index] == key { return index }
    return nil
  }

  public func write(_ root: Root, to writer: inout JSONWriter) {
    writer.beginObject()
    withUnsafePointer(to: root) { typed in
      let rootPointer = UnsafeRawPointer(typed)
      for index in unretainedFields.indices {
        unretainedFields[index]._withUnsafeGuaranteedRef { field in
          let member = rootPointer + field.offset
          guard field.isWritten?(member) ?? true else { return }
          writer.key(field.staticKey)
          field.write(member, &writer)
        }
      }
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
