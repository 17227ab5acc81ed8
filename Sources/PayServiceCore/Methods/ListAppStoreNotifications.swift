/// The App Store Server Notifications payservice heard, newest first: CONSUMPTION_REQUEST ones
/// (Apple asks how much of a refunded consumable was used), and any other type, for the back office.
/// Back office only (`--back-office`).
public enum ListAppStoreNotifications: RPCMethod {
  public static let name = "listAppStoreNotifications"

  public static let documentation = MethodDocumentation(
    summary: "List the App Store notifications heard, newest first (CONSUMPTION_REQUEST ones, say).",
    description: """
      Lists the notifications processAppStoreNotification and recoverAppStoreNotifications recorded (each \
      once), newest signedDate first: notificationUUID, notificationType, subtype, environment, signedDate, \
      the purchase it is about (originalTransactionId, transactionId), what it changed (effect) and when \
      payservice heard it. type keeps one notificationType (CONSUMPTION_REQUEST: Apple asks, within 12 \
      hours, how much of a consumable a customer asking for a refund used). limit 1 to 100 (default 20); \
      nextCursor, when not null, fetches the next page. Changes nothing.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: true, idempotent: true)
  public static let usesStore = true

  public struct Params: Sendable {
    public var type: String?
    public var limit = 20
    public var cursor: Cursor?
  }

  /// A position in the listing: the last notification of a page. Opaque to clients.
  public struct Cursor: KeysetCursor {
    public var signedDate: Int64
    public var notificationUUID: String

    public static let prefix = "an1_"
    public static let method = ListAppStoreNotifications.name
    public var fields: [String] { [String(signedDate), notificationUUID] }

    public init(signedDate: Int64, notificationUUID: String) {
      self.signedDate = signedDate
      self.notificationUUID = notificationUUID
    }

    public init?(fields: [Substring]) {
      guard fields.count == 2, let date = Int64(fields[0]), !fields[1].isEmpty else { return nil }
      self.init(signedDate: date, notificationUUID: String(fields[1]))
    }
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "type", \.type, .optional, .string("One notificationType, like CONSUMPTION_REQUEST.", pattern: "^[A-Z_]{1,64}$"),
        read: { value, path, reader in
          guard let text = reader.string(value, path()) else { return nil }
          guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x41...0x5A).contains($0) || $0 == 0x5F })
          else {
            reader.fail(path(), "must be a notificationType like CONSUMPTION_REQUEST (upper-case letters and _)")
            return nil
          }
          return text
        }),
      .member(
        "limit", \.limit, .optional,
        .integer("Notifications per page, 1 to 100; default 20.", minimum: 1, maximum: 100),
        read: { value, path, reader in reader.integer(value, path(), range: 1...100) }),
      .member("cursor", \.cursor, .optional),
    ])

  /// A notification as recorded.
  public struct Heard: Equatable, Sendable, WireObject {
    public var about = ProcessAppStoreNotification.About()
    public var effect = ""
    public var receivedAt = ""

    public static let shape = ObjectShape<Heard>(
      blank: { Heard() },
      ProcessAppStoreNotification.About.shape.fields(at: \.about) + [
        .member(
          "effect", \.effect, .required,
          .string("What it changed, as processAppStoreNotification answered.", values: AppStoreLedger.Effect.allCases.map(\.rawValue))),
        .member("receivedAt", \.receivedAt, .required, Shapes.timestamp),
      ])
  }

  public struct Result: MethodResult, WireObject {
    public var notifications: [Heard] = []
    public var nextCursor: Cursor?

    public static let shape = ObjectShape<Result>(
      blank: { Result() },
      [
        .member("notifications", \.notifications, .required, .array(Heard.schema, "Newest signedDate first.")),
        .member(
          "nextCursor", \.nextCursor, .alwaysOrNull,
          .string("Send as cursor for the next page; null on the last page.", pattern: "^an1_[0-9a-f]+$")),
      ])
  }

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let query = AppStoreNotificationQuery(
      type: params.type, before: params.cursor.map { ($0.signedDate, $0.notificationUUID) }, limit: params.limit + 1)
    let rows = try context.store.write { transaction in try transaction.appStoreNotifications(query) }
    let page = rows.prefix(params.limit)
    return Result(
      notifications: page.map {
        Heard(about: ProcessAppStoreNotification.About($0), effect: $0.effect, receivedAt: $0.receivedAt)
      },
      nextCursor: rows.count > params.limit
        ? page.last.map { Cursor(signedDate: $0.signedDate, notificationUUID: $0.notificationUUID) } : nil)
  }
}
