/// Fetches the notifications Apple could not deliver (Get Notification History) and applies them:
/// what an endpoint that was down missed. Back office only (`--back-office`).
public enum RecoverAppStoreNotifications: RPCMethod {
  public static let name = "recoverAppStoreNotifications"

  public static let documentation = MethodDocumentation(
    summary: "Fetch the App Store Server Notifications Apple could not deliver, and apply them once.",
    description: """
      Asks the App Store Server API (Get Notification History, every page) for the notifications Apple sent \
      from since to until (default: the service clock; Apple keeps 180 days), only those whose delivery \
      failed unless onlyFailures is false, in each accepted environment (Production, Sandbox). Each is \
      verified and recorded as processAppStoreNotification records it: one heard already answers from the \
      journal and changes nothing (counted as known), so recovering twice, or recovering what was delivered \
      after all, is harmless. Pages are fetched with no store transaction open. Answers the notifications \
      newly recorded with their effect, the count of known ones and those refused. A failure (unauthorized, \
      invalid_request, unavailable, invalid_response, not_configured) keeps what earlier pages applied.
      """,
    errors: [.storeUnavailable, .invalidParams], readOnly: false, idempotent: true)
  public static let runsAsNotification = false
  public static let usesStore = true

  /// How far back Apple keeps notification history.
  static let historyDays: Int64 = 180

  public struct Params: Sendable {
    public var since = ""
    public var until: String?
    public var onlyFailures = true
  }

  public static let params = ObjectShape<Params>(
    blank: { Params() },
    [
      .member(
        "since", \.since, .required,
        .string("Notifications Apple sent at or after this RFC 3339 time (at most 180 days ago).", minLength: 1),
        read: ListOrders.readTime),
      .member(
        "until", \.until, .optional, .string("And before this time; default: the service clock.", minLength: 1),
        read: ListOrders.readTime),
      .member(
        "onlyFailures", \.onlyFailures, .optional,
        .boolean("Only notifications whose delivery failed (default true); false fetches every one.")),
    ])

  /// A notification recovered and recorded now.
  public struct Recovered: Equatable, Sendable, WireObject {
    public var notificationUUID = ""
    public var notificationType = ""
    public var effect = AppStoreLedger.Effect.none

    public static let shape = ObjectShape<Recovered>(
      blank: { Recovered() },
      [.member("notificationUUID", \.notificationUUID), .member("notificationType", \.notificationType), .member("effect", \.effect)])
  }

  public struct Done: Equatable, Sendable, WireObject {
    public var since = ""
    public var until = ""
    public var environments: [String] = []
    public var pages = 0
    public var recorded: [Recovered] = []
    /// Heard before: answered from the journal, nothing changed.
    public var known = 0
    public var refused: [AppStoreRefused] = []

    public static let shape = ObjectShape<Done>(
      blank: { Done() },
      [
        .constant("status", "succeeded"), .member("since", \.since, .required, Shapes.timestamp),
        .member("until", \.until, .required, Shapes.timestamp), .member("environments", \.environments),
        .member("pages", \.pages), .member("recorded", \.recorded),
        .member("known", \.known, .required, .integer("Notifications heard before: nothing changed.")),
        .member("refused", \.refused),
      ])
  }

  public typealias Result = Outcome<Done, AppStoreRefused>

  public static func run(_ params: Params, context: ServiceContext) throws -> Result {
    let now = context.clock.now()
    let since = RFC3339.parse(params.since) ?? 0
    let until = params.until.flatMap(RFC3339.parse) ?? now
    guard since < until else {
      throw ServiceError.invalidParams([
        FieldError(path: "since", message: "must be before until (\(RFC3339.format(until)))")
      ])
    }
    guard since >= now - historyDays * 86_400 else {
      throw ServiceError.invalidParams([
        FieldError(
          path: "since",
          message: "must be within Apple's 180 days of notification history: at or after \(RFC3339.format(now - historyDays * 86_400))")
      ])
    }
    guard let settings = context.config.appStore else { return .failed(.notConfigured) }
    guard let calls = context.appStoreServer else { return .failed(.noAPI) }
    var done = Done(since: RFC3339.format(since), until: RFC3339.format(until))
    for environment in AppStoreHistory.environments(settings) {
      done.environments.append(environment.rawValue)
      var token: String?
      while true {
        let page: AppStoreNotificationHistoryPage
        switch calls.notificationHistory(
          startDate: since * 1000, endDate: until * 1000, onlyFailures: params.onlyFailures, paginationToken: token,
          environment: environment)
        {
        case .success(let fetched): page = fetched
        case .failure(let failure):
          return .failed(AppStoreRefused(failure, "the notification history (\(environment.rawValue))"))
        }
        done.pages += 1
        for signed in page.signedPayloads {
          switch ProcessAppStoreNotification.verify(signed, settings: settings, now: now) {
          case .failure(let refused):
            done.refused.append(refused)
          case .success(let notification):
            switch try ProcessAppStoreNotification.start(notification, context: context) {
            case .failed(let refused): done.refused.append(refused)
            case .known: done.known += 1
            case .recorded(let recorded):
              done.recorded.append(
                Recovered(
                  notificationUUID: recorded.about.notificationUUID, notificationType: recorded.about.notificationType,
                  effect: recorded.effect))
            }
          }
        }
        guard page.hasMore, let next = page.paginationToken, next != token else { break }
        token = next
      }
    }
    return .succeeded(done)
  }
}
