/**
 * The dashboard's text in English and Russian: one dictionary per language with the same keys
 * (the type makes a missing translation a compile error), the chosen language kept in
 * localStorage (it is no secret), and `format` helpers for dates and amounts.
 */
import type { EventSent } from "@paydesk/client"

/** The languages the dashboard speaks. */
export type Language = "en" | "ru"

const en = {
  "app.name": "Paydesk",
  "app.skip": "Skip to content",
  "nav.payments": "Payments",
  "nav.settings": "Terminal settings",
  "nav.main": "Main navigation",
  "env.label": "Mode",
  "env.sandbox": "Sandbox",
  "env.live": "Live",
  "env.banner": "Sandbox: test data, no real money",
  "lang.label": "Language",
  "signin.title": "Sign in",
  "signin.email": "E-mail",
  "signin.password": "Password",
  "signin.noTerminals": "Your account has no terminal yet. Ask the operator to set one up.",
  "terminal.label": "Terminal",
  "signin.submit": "Sign in",
  "signin.busy": "Signing in…",
  "signin.expired": "Your session has ended. Please sign in again.",
  "signout": "Sign out",
  "loading": "Loading…",
  "error.generic": "Something went wrong",
  "error.connection": "No answer from the server: check the connection and try again",
  "retry": "Try again",
  "payments.title": "Payments",
  "payments.filters": "Filters",
  "payments.status": "Status",
  "payments.status.any": "Any status",
  "payments.allEnvironments": "Both sandbox and live",
  "payments.orderId": "Order ID",
  "payments.search": "Search",
  "payments.clear": "Clear",
  "payments.empty": "No payments match.",
  "list.ignored": "Ignored in the address, not valid: {values}.",
  "payments.from": "From",
  "payments.to": "To",
  "payments.col.created": "Created",
  "payments.col.order": "Order",
  "payments.col.amount": "Amount",
  "payments.col.status": "Status",
  "payments.col.env": "Mode",
  "paging.label": "Pages",
  "paging.prev": "Previous",
  "paging.next": "Next",
  "paging.of": "Page {page} of {pages} ({total} in all)",
  "paging.pastEnd": "Page {page} is past the end of the list: the last page is {pages} ({total} in all).",
  "paging.first": "Go to the first page",
  "status.created": "Awaiting payment",
  "status.processing": "Processing",
  "status.paid": "Paid",
  "status.canceled": "Canceled",
  "status.expired": "Expired",
  "status.chargeback": "Chargeback",
  "status.refunded": "Refunded",
  "payment.back": "All payments",
  "payment.title": "Payment {order}",
  "payment.details": "Details",
  "payment.id": "Payment ID",
  "payment.paidAt": "Paid",
  "payment.credited": "Credited",
  "payment.creditedUsdt": "{usdt} for {rub} at {rate}, {at}",
  "payment.creditedPending": "{rub}, awaiting conversion",
  "payment.creditedRub": "{rub}, not converted",
  "payment.creditedReversed": "{credit}; taken back ({status})",
  "payment.expiresAt": "Expires",
  "payment.description": "Description",
  "payment.events": "Events and deliveries",
  "timeline.title": "Timeline",
  "timeline.created": "Created",
  "timeline.paid": "Paid",
  "timeline.canceled": "Canceled",
  "timeline.expired": "Expired",
  "timeline.chargeback": "Chargeback",
  "timeline.refunded": "Refunded",
  "payment.noEvents": "No events yet.",
  "payment.otherMode": "This payment is of {environment} mode, while the dashboard is in {mode} mode.",
  "event.delivery": "Delivery",
  "event.noDelivery": "Not delivered: no callback URL.",
  "event.resend": "Resend",
  "event.resending": "Sending…",
  "event.resent": "Sent again: {result}",
  "event.resentFailed": "Sent again, but your endpoint did not accept it: {result}",
  "delivery.kind.scheduled": "scheduled",
  "delivery.kind.recover": "recovery",
  "delivery.kind.resend": "resend",
  "attempt.ms": "{ms} ms",
  "attempt.col.n": "#",
  "attempt.col.at": "At",
  "attempt.col.status": "HTTP status",
  "attempt.col.latency": "Time",
  "attempt.col.error": "Error",
  "attempt.none": "No attempts yet.",
  "delivery.pending": "Pending",
  "delivery.delivered": "Delivered",
  "delivery.failed": "Failed",
  "nav.home": "Home",
  "home.title": "Home",
  "home.today": "Today",
  "home.count": "Payments",
  "home.volume": "Volume",
  "home.byStatus": "All payments by status",
  "home.total": "Total",
  "home.chart": "Volume per day, last {days} days",
  "home.chartLabel": "Payment volume per day over the last {days} days, by status; {total} in all",
  "payments.export": "Export CSV",
  "nav.subscriptions": "Subscriptions",
  "nav.payouts": "Payouts",
  "subs.title": "Subscriptions",
  "subs.state": "State",
  "subs.state.any": "Any state",
  "subs.state.new": "New",
  "subs.state.active": "Active",
  "subs.state.stop": "Stopped",
  "subs.col.ref": "Reference",
  "subs.col.plan": "Plan",
  "subs.col.amount": "Amount",
  "subs.col.billing": "Billing",
  "subs.col.next": "Next charge",
  "subs.empty": "No subscriptions.",
  "subs.stop": "Stop",
  "subs.stopConfirm": "Stop subscription {ref}? No further charges will be made.",
  "subs.stopped": "Subscription {ref} is stopping.",
  "sub.back": "All subscriptions",
  "sub.title": "Subscription {ref}",
  "sub.cycles": "Paid cycles",
  "sub.stoppedAt": "Stopped",
  "sub.charges": "Charge history",
  "sub.noCharges": "No charges yet.",
  "sub.cycle": "Cycle",
  "sub.attempt": "Attempt",
  "sub.scheduled": "Scheduled",
  "sub.message": "Message",
  "sub.upcoming": "Upcoming charges",
  "sub.noUpcoming": "None: only an enabled subscription is charged.",
  "sub.state.new": "New",
  "sub.state.active": "Active",
  "sub.state.stop": "Stopped",
  "billing.consent_pending": "Waiting for consent",
  "billing.pending": "First payment pending",
  "billing.enabled": "Enabled",
  "billing.review": "In review",
  "billing.stop_pending": "Stopping",
  "billing.stopped": "Stopped",
  "charge.payed": "Paid",
  "charge.fail": "Failed",
  "charge.stop": "Subscription stopped",
  "charge.pending": "Pending",
  "charge.review": "sent for review",
  "interval.day": "daily",
  "interval.month": "monthly",
  "interval.quarter": "quarterly",
  "interval.half_year": "every six months",
  "interval.year": "yearly",
  "payouts.title": "Payouts",
  "payouts.live": "Payouts always move real USDT, whatever the mode.",
  "payouts.liveInSandbox": "Payouts are live, also in sandbox mode: real USDT leaves the live balance below.",
  "home.balanceLive": "The live balance: real money, whatever the mode.",
  "payouts.balance": "Balance",
  "payouts.available": "Available",
  "payouts.hold": "Held",
  "payouts.pendingRub": "Paid, awaiting conversion",
  "payouts.rate": "Rate",
  "payouts.new": "New payout",
  "payouts.amount": "Amount, USDT",
  "payouts.wallet": "Wallet address",
  "payouts.network": "Network",
  "payouts.walletHint.TRC-20": "A TRON address: 34 characters starting with T.",
  "payouts.walletHint.ERC-20": "An Ethereum address: 0x and 40 hexadecimal digits. Copy it as your wallet shows it: the case of its letters is a checksum, checked when it mixes upper and lower case.",
  "payouts.walletHint.TON": "A TON address: 48 characters (EQ…, UQ…), or 0: or -1: and 64 hexadecimal digits.",
  "payouts.request": "Request payout",
  "payouts.confirm": "Send {amount} USDT of real money from the live balance to {wallet} ({network})? Available: {available} USDT.",
  "payouts.over": "The amount is more than the available balance.",
  "payouts.zero": "The amount must be greater than zero.",
  "payouts.created": "Payout requested: {status}.",
  "payouts.unknown": "No answer came: the payout may have been requested. Check the list below; requesting the same payout again in this tab is safe (it is not made twice).",
  "payouts.empty": "No payouts yet.",
  "payouts.col.created": "Requested",
  "payouts.col.amount": "USDT",
  "payouts.col.wallet": "Wallet",
  "payouts.col.status": "Status",
  "payout.created": "Created",
  "payout.pending": "Pending approval",
  "payout.processing": "Processing",
  "payout.completed": "Completed",
  "payout.rejected": "Rejected",
  "terminal.form": "Settings",
  "endpoint.healthy": "Healthy",
  "endpoint.failing": "Failing",
  "endpoint.unknown": "No deliveries yet",
  "terminal.successUrl": "Redirect after payment",
  "terminal.failUrl": "Redirect after failure or expiry",
  "terminal.conversion": "Conversion to USDT",
  "terminal.conversion.instant": "Instant",
  "terminal.conversion.scheduled": "Once a day",
  "terminal.conversionTime": "Conversion time, Moscow time (HH:MM)",
  "terminal.conversionLocal": "{time} Moscow time is {local} in your time zone.",
  "terminal.conversionLocal.next": "{time} Moscow time is {local} the next day in your time zone.",
  "terminal.conversionLocal.prev": "{time} Moscow time is {local} the day before in your time zone.",
  "terminal.branding": "Show the platform's branding on the payment page",
  "terminal.save": "Save settings",
  "terminal.saved": "Settings saved.",
  "terminal.unchanged": "Nothing changed.",
  "terminal.testEvent": "Send a test event",
  "terminal.disabled": "The operator has disabled this terminal: it takes no new payments, subscriptions or payouts, and its settings cannot be changed. Ask the operator to enable it.",
  "terminal.testSent": "Test event sent: {result}",
  "terminal.testFailed": "Test event sent, but your endpoint did not accept it: {result}",
  "keys.title": "API keys",
  "keys.prefix": "Key",
  "keys.created": "Created",
  "keys.write": "Subscription write access",
  "keys.revoked": "Revoked",
  "keys.revoke": "Revoke",
  "keys.revokeConfirm": "Revoke key {prefix}…? Requests with it stop working at once.",
  "keys.create": "Create API key",
  "keys.shownOnce": "New API key (shown only now; copy it):",
  "yes": "Yes",
  "no": "No",
  "settings.title": "Terminal settings",
  "settings.callbackUrl": "Callback URL",
  "settings.endpoint": "Callback endpoint",
  "settings.secret": "Signing secret",
  "settings.rotate": "Rotate signing secret",
  "settings.rotateConfirm": "Rotate the signing secret? The previous one keeps signing during the overlap; deploy the new one before it ends.",
  "settings.newSecret": "New secret (shown only now; copy it):",
  "settings.rotateUnknown": "No answer came: the secret may have been rotated. Rotate again in this tab to see the secret it made (the same rotation is answered, not a second one).",
  "settings.overlapUntil": "The previous secret signs until {at}.",
  "password.title": "Your password",
  "password.note": "Changing it signs you out everywhere else: other devices and browsers must sign in again with the new password.",
  "password.current": "Current password",
  "password.new": "New password (8 to 256 characters)",
  "password.repeat": "New password again",
  "password.submit": "Change password",
  "password.mismatch": "The two new passwords differ.",
  "password.same": "The new password is the current one: choose another.",
  "password.wrongCurrent": "The current password is not right.",
  "password.changed": "Password changed. Every other session has been signed out.",
  "confirm": "Confirm",
  "cancel": "Cancel",
  "notFound.title": "Page not found",
  "notFound.home": "Go to the home page",
  "none": "—"
} as const

/** A text's key. */
export type Key = keyof typeof en

const ru: { readonly [K in Key]: string } = {
  "app.name": "Paydesk",
  "app.skip": "Перейти к содержимому",
  "nav.payments": "Платежи",
  "nav.settings": "Настройки терминала",
  "nav.main": "Главное меню",
  "env.label": "Режим",
  "env.sandbox": "Песочница",
  "env.live": "Боевой",
  "env.banner": "Песочница: тестовые данные, без реальных денег",
  "lang.label": "Язык",
  "signin.title": "Вход",
  "signin.email": "Эл. почта",
  "signin.password": "Пароль",
  "signin.noTerminals": "В вашем аккаунте пока нет терминала. Попросите оператора его подключить.",
  "terminal.label": "Терминал",
  "signin.submit": "Войти",
  "signin.busy": "Входим…",
  "signin.expired": "Сессия завершилась. Войдите снова.",
  "signout": "Выйти",
  "loading": "Загрузка…",
  "error.generic": "Что-то пошло не так",
  "error.connection": "Сервер не ответил: проверьте подключение и повторите попытку",
  "retry": "Повторить",
  "payments.title": "Платежи",
  "payments.filters": "Фильтры",
  "payments.status": "Статус",
  "payments.status.any": "Любой статус",
  "payments.allEnvironments": "И песочница, и боевой",
  "payments.orderId": "Номер заказа",
  "payments.search": "Найти",
  "payments.clear": "Сбросить",
  "payments.empty": "Платежей не найдено.",
  "list.ignored": "Пропущено в адресе как неверное: {values}.",
  "payments.from": "С",
  "payments.to": "По",
  "payments.col.created": "Создан",
  "payments.col.order": "Заказ",
  "payments.col.amount": "Сумма",
  "payments.col.status": "Статус",
  "payments.col.env": "Режим",
  "paging.label": "Страницы",
  "paging.prev": "Назад",
  "paging.next": "Вперёд",
  "paging.of": "Страница {page} из {pages} (всего {total})",
  "paging.pastEnd": "Страницы {page} нет в списке: последняя страница — {pages} (всего {total}).",
  "paging.first": "На первую страницу",
  "status.created": "Ожидает оплаты",
  "status.processing": "В обработке",
  "status.paid": "Оплачено",
  "status.canceled": "Отменён",
  "status.expired": "Истёк",
  "status.chargeback": "Чарджбэк",
  "status.refunded": "Возвращён",
  "payment.back": "Все платежи",
  "payment.title": "Платёж {order}",
  "payment.details": "Сведения",
  "payment.id": "ID платежа",
  "payment.paidAt": "Оплачен",
  "payment.credited": "Зачислено",
  "payment.creditedUsdt": "{usdt} за {rub} по курсу {rate}, {at}",
  "payment.creditedPending": "{rub}, ждёт конвертации",
  "payment.creditedRub": "{rub}, не конвертировано",
  "payment.creditedReversed": "{credit}; списано обратно ({status})",
  "payment.expiresAt": "Истекает",
  "payment.description": "Описание",
  "payment.events": "События и доставки",
  "timeline.title": "Хронология",
  "timeline.created": "Создан",
  "timeline.paid": "Оплачен",
  "timeline.canceled": "Отменён",
  "timeline.expired": "Истёк",
  "timeline.chargeback": "Чарджбэк",
  "timeline.refunded": "Возврат",
  "payment.noEvents": "Событий пока нет.",
  "payment.otherMode": "Этот платёж из режима «{environment}», а панель в режиме «{mode}».",
  "event.delivery": "Доставка",
  "event.noDelivery": "Не доставляется: нет адреса для уведомлений.",
  "event.resend": "Отправить снова",
  "event.resending": "Отправляем…",
  "event.resent": "Отправлено снова: {result}",
  "event.resentFailed": "Отправлено снова, но ваш обработчик его не принял: {result}",
  "delivery.kind.scheduled": "по расписанию",
  "delivery.kind.recover": "повтор после сбоя",
  "delivery.kind.resend": "отправка вручную",
  "attempt.ms": "{ms} мс",
  "attempt.col.n": "№",
  "attempt.col.at": "Время",
  "attempt.col.status": "HTTP-статус",
  "attempt.col.latency": "Длительность",
  "attempt.col.error": "Ошибка",
  "attempt.none": "Попыток пока не было.",
  "delivery.pending": "Ожидает",
  "delivery.delivered": "Доставлено",
  "delivery.failed": "Не доставлено",
  "nav.home": "Главная",
  "home.title": "Главная",
  "home.today": "Сегодня",
  "home.count": "Платежей",
  "home.volume": "Оборот",
  "home.byStatus": "Все платежи по статусам",
  "home.total": "Всего",
  "home.chart": "Оборот по дням за {days} дней",
  "home.chartLabel": "Оборот платежей по дням за последние {days} дней по статусам; всего {total}",
  "payments.export": "Выгрузить CSV",
  "nav.subscriptions": "Подписки",
  "nav.payouts": "Выплаты",
  "subs.title": "Подписки",
  "subs.state": "Состояние",
  "subs.state.any": "Любое состояние",
  "subs.state.new": "Новые",
  "subs.state.active": "Активные",
  "subs.state.stop": "Остановленные",
  "subs.col.ref": "Ссылка",
  "subs.col.plan": "Тариф",
  "subs.col.amount": "Сумма",
  "subs.col.billing": "Списания",
  "subs.col.next": "Следующее списание",
  "subs.empty": "Подписок нет.",
  "subs.stop": "Остановить",
  "subs.stopConfirm": "Остановить подписку {ref}? Списаний больше не будет.",
  "subs.stopped": "Подписка {ref} останавливается.",
  "sub.back": "Все подписки",
  "sub.title": "Подписка {ref}",
  "sub.cycles": "Оплачено циклов",
  "sub.stoppedAt": "Остановлена",
  "sub.charges": "История списаний",
  "sub.noCharges": "Списаний пока не было.",
  "sub.cycle": "Цикл",
  "sub.attempt": "Попытка",
  "sub.scheduled": "По графику",
  "sub.message": "Сообщение",
  "sub.upcoming": "Предстоящие списания",
  "sub.noUpcoming": "Нет: списания идут, только когда они включены.",
  "sub.state.new": "Новая",
  "sub.state.active": "Активна",
  "sub.state.stop": "Остановлена",
  "billing.consent_pending": "Ждут согласия",
  "billing.pending": "Ждут первого платежа",
  "billing.enabled": "Включены",
  "billing.review": "На проверке",
  "billing.stop_pending": "Останавливаются",
  "billing.stopped": "Остановлены",
  "charge.payed": "Оплачено",
  "charge.fail": "Не удалось",
  "charge.stop": "Подписка остановлена",
  "charge.pending": "В обработке",
  "charge.review": "отправлено на проверку",
  "interval.day": "ежедневно",
  "interval.month": "ежемесячно",
  "interval.quarter": "ежеквартально",
  "interval.half_year": "раз в полгода",
  "interval.year": "ежегодно",
  "payouts.title": "Выплаты",
  "payouts.live": "Выплаты всегда переводят настоящие USDT, в любом режиме.",
  "payouts.liveInSandbox": "Выплаты настоящие и в режиме песочницы: реальные USDT уходят с живого баланса ниже.",
  "home.balanceLive": "Живой баланс: настоящие деньги в любом режиме.",
  "payouts.balance": "Баланс",
  "payouts.available": "Доступно",
  "payouts.hold": "Заморожено",
  "payouts.pendingRub": "Оплачено, ждёт конвертации",
  "payouts.rate": "Курс",
  "payouts.new": "Новая выплата",
  "payouts.amount": "Сумма, USDT",
  "payouts.wallet": "Адрес кошелька",
  "payouts.network": "Сеть",
  "payouts.walletHint.TRC-20": "Адрес TRON: 34 символа, начинается с T.",
  "payouts.walletHint.ERC-20": "Адрес Ethereum: 0x и 40 шестнадцатеричных цифр. Скопируйте его так, как показывает кошелёк: регистр букв — контрольная сумма, она проверяется, если в адресе есть и заглавные, и строчные буквы.",
  "payouts.walletHint.TON": "Адрес TON: 48 символов (EQ…, UQ…) или 0: либо -1: и 64 шестнадцатеричные цифры.",
  "payouts.request": "Запросить выплату",
  "payouts.confirm": "Отправить {amount} USDT настоящих денег с живого баланса на {wallet} ({network})? Доступно: {available} USDT.",
  "payouts.over": "Сумма больше доступного баланса.",
  "payouts.zero": "Сумма должна быть больше нуля.",
  "payouts.created": "Выплата запрошена: {status}.",
  "payouts.unknown": "Ответ не получен: выплата, возможно, уже запрошена. Проверьте список ниже; повторный запрос той же выплаты в этой вкладке безопасен (вторая не создаётся).",
  "payouts.empty": "Выплат пока нет.",
  "payouts.col.created": "Запрошена",
  "payouts.col.amount": "USDT",
  "payouts.col.wallet": "Кошелёк",
  "payouts.col.status": "Статус",
  "payout.created": "Создана",
  "payout.pending": "Ждёт одобрения",
  "payout.processing": "В обработке",
  "payout.completed": "Выполнена",
  "payout.rejected": "Отклонена",
  "terminal.form": "Параметры",
  "endpoint.healthy": "Работает",
  "endpoint.failing": "Сбоит",
  "endpoint.unknown": "Доставок ещё не было",
  "terminal.successUrl": "Переход после оплаты",
  "terminal.failUrl": "Переход после ошибки или истечения срока",
  "terminal.conversion": "Конвертация в USDT",
  "terminal.conversion.instant": "Сразу",
  "terminal.conversion.scheduled": "Раз в день",
  "terminal.conversionTime": "Время конвертации по Москве (ЧЧ:ММ)",
  "terminal.conversionLocal": "{time} по Москве — это {local} по вашему времени.",
  "terminal.conversionLocal.next": "{time} по Москве — это {local} следующего дня по вашему времени.",
  "terminal.conversionLocal.prev": "{time} по Москве — это {local} предыдущего дня по вашему времени.",
  "terminal.branding": "Показывать бренд платформы на странице оплаты",
  "terminal.save": "Сохранить настройки",
  "terminal.saved": "Настройки сохранены.",
  "terminal.unchanged": "Ничего не изменилось.",
  "terminal.testEvent": "Отправить тестовое событие",
  "terminal.disabled": "Оператор отключил этот терминал: новые платежи, подписки и выплаты не принимаются, настройки не меняются. Попросите оператора включить его.",
  "terminal.testSent": "Тестовое событие отправлено: {result}",
  "terminal.testFailed": "Тестовое событие отправлено, но ваш обработчик его не принял: {result}",
  "keys.title": "API-ключи",
  "keys.prefix": "Ключ",
  "keys.created": "Создан",
  "keys.write": "Право создавать подписки",
  "keys.revoked": "Отозван",
  "keys.revoke": "Отозвать",
  "keys.revokeConfirm": "Отозвать ключ {prefix}…? Запросы с ним сразу перестанут работать.",
  "keys.create": "Создать API-ключ",
  "keys.shownOnce": "Новый API-ключ (показывается только сейчас, скопируйте его):",
  "yes": "Да",
  "no": "Нет",
  "settings.title": "Настройки терминала",
  "settings.callbackUrl": "Адрес для уведомлений",
  "settings.endpoint": "Состояние адреса уведомлений",
  "settings.secret": "Секрет подписи",
  "settings.rotate": "Сменить секрет подписи",
  "settings.rotateConfirm": "Сменить секрет подписи? Прежний продолжит подписывать в период перекрытия; установите новый до его окончания.",
  "settings.newSecret": "Новый секрет (показывается только сейчас, скопируйте его):",
  "settings.rotateUnknown": "Ответ не получен: секрет, возможно, уже сменён. Нажмите «Сменить» ещё раз в этой вкладке, чтобы увидеть созданный секрет (будет показана та же смена, вторая не выполняется).",
  "settings.overlapUntil": "Прежний секрет подписывает до {at}.",
  "password.title": "Ваш пароль",
  "password.note": "После смены пароля все другие сеансы завершатся: на других устройствах и в других браузерах нужно будет войти с новым паролем.",
  "password.current": "Текущий пароль",
  "password.new": "Новый пароль (от 8 до 256 символов)",
  "password.repeat": "Новый пароль ещё раз",
  "password.submit": "Сменить пароль",
  "password.mismatch": "Новые пароли не совпадают.",
  "password.same": "Новый пароль совпадает с текущим: выберите другой.",
  "password.wrongCurrent": "Текущий пароль указан неверно.",
  "password.changed": "Пароль изменён. Все другие сеансы завершены.",
  "confirm": "Подтвердить",
  "cancel": "Отмена",
  "notFound.title": "Страница не найдена",
  "notFound.home": "На главную",
  "none": "—"
}

/** Both dictionaries (for tests and tools). */
export const dictionaries: { readonly [L in Language]: { readonly [K in Key]: string } } = { en, ru }

const storageKey = "paydesk.language"

/** The language kept from last time, else the browser's (Russian when it prefers Russian). */
export const initialLanguage = (): Language => {
  const kept = localStorage.getItem(storageKey)
  if (kept === "en" || kept === "ru") return kept
  return navigator.language.toLowerCase().startsWith("ru") ? "ru" : "en"
}

/** Remembers the language. */
export const keepLanguage = (language: Language): void => localStorage.setItem(storageKey, language)

/** A translator: the text of `key` with `{name}` placeholders filled. */
export const translator = (language: Language) =>
  (key: Key, values: { readonly [name: string]: string | number } = {}): string =>
    dictionaries[language][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))

/** A translator's type. */
export type Translate = ReturnType<typeof translator>

/**
 * The API's refusals in Russian, by error code: the server's messages are English (the API's, for
 * developers); a person using the dashboard in Russian reads these. `{detail}` is the API's message
 * (which names the field and what it expects), `{seconds}` the wait a 429 asks for. Every code the
 * dashboard's own calls can meet has one; a code not here (one only payment or subscription
 * creation, the payer pages, API keys or the operator meet, or a new one) is shown with the API's
 * message.
 */
const apiErrorsRu: { readonly [code: string]: string } = {
  invalid_credentials: "Неверный e-mail или пароль.",
  unauthenticated: "Сессия недействительна или истекла: войдите снова.",
  access_denied: "Недостаточно прав для этого действия.",
  too_many_requests: "Слишком много попыток: повторите через {seconds} с.",
  insufficient_balance: "Недостаточно средств на балансе.",
  max_active_payouts: "Слишком много выплат в работе: дождитесь завершения одной из них.",
  terminal_unavailable: "Терминал отключён оператором.",
  invalid_request: "Неверные данные: {detail}",
  invalid_json_body: "Неверный запрос: {detail}",
  body_too_large: "Слишком большой запрос: сократите введённые данные.",
  amount_malformed: "Неверная сумма: {detail}",
  amount_not_positive: "Сумма должна быть больше нуля.",
  usdt_amount_malformed: "Неверная сумма USDT: {detail}",
  idempotency_conflict: "Такой запрос уже был отправлен с другими данными.",
  invalid_transition: "Действие не выполнено: состояние уже изменилось. Обновите страницу.",
  write_conflict: "Запись сейчас изменяется: повторите ещё раз.",
  test_clock_advancing: "Тестовые часы переводятся: повторите, когда перевод закончится.",
  recurring_not_configured: "Подписки не подключены: попросите оператора подключить тарифы.",
  provider_unavailable: "Банк сейчас недоступен: повторите позже.",
  stop_failed: "Не удалось завершить отключение подписки: подписка переведена на проверку (review).",
  not_found: "Не найдено.",
  route_not_found: "Не найдено.",
  uri_too_long: "Слишком длинный адрес: такой записи нет.",
  request_timeout: "Запрос шёл до сервера слишком долго: повторите.",
  service_busy: "Сервис занят: повторите через секунду.",
  service_unavailable: "Сервис временно недоступен: повторите позже.",
  internal_error: "Внутренняя ошибка сервиса: повторите позже."
}

/** An answer that is not the API's error body (a proxy's page): the client's code `http_<status>`. */
const httpErrorRu = "Сервер ответил ошибкой HTTP {status}: повторите позже."

/**
 * The refusals whose API message is the spec's Russian text (the API's others are English): in
 * English by code, so an English page never shows Russian. Of them only `stop_failed` can reach the
 * dashboard (`subscription_fields_missing` is subscription creation's).
 */
const apiErrorsEn: { readonly [code: string]: string } = {
  stop_failed: "The subscription could not be stopped: it was moved to review."
}

/**
 * What to show for an API refusal: in English the API's own message (`apiErrorsEn`'s where it is
 * the spec's Russian), in Russian its text by code (`apiErrorsRu`).
 */
export const apiErrorText = (language: Language, error: { readonly code: string; readonly message: string; readonly retryAfterMs?: number | undefined }): string => {
  if (language !== "ru") return Object.prototype.hasOwnProperty.call(apiErrorsEn, error.code) ? apiErrorsEn[error.code]! : error.message
  const status = /^http_(\d{3})$/.exec(error.code)?.[1]
  const text = Object.prototype.hasOwnProperty.call(apiErrorsRu, error.code) ? apiErrorsRu[error.code] : status === undefined ? undefined : httpErrorRu
  if (text === undefined) return error.message
  const seconds = error.retryAfterMs === undefined ? 60 : Math.max(1, Math.ceil(error.retryAfterMs / 1000))
  return text.replace("{detail}", error.message).replace("{seconds}", String(seconds)).replace("{status}", status ?? "")
}

/**
 * Whether an event sent now (a resend or a test event) was accepted: its attempt answered 2xx, or,
 * with no attempt of its own (another worker recorded it first), its delivery is delivered.
 */
export const sentAccepted = (sent: EventSent): boolean =>
  sent.attempt === null
    ? sent.delivery.status === "delivered"
    : sent.attempt.status_code !== null && sent.attempt.status_code >= 200 && sent.attempt.status_code < 300

/** What an event sent now came to: the attempt's HTTP status or error, else the delivery's state. */
export const attemptResult = (t: Translate, sent: EventSent): string =>
  sent.attempt === null ? t(`delivery.${sent.delivery.status}`)
    : sent.attempt.status_code === null ? sent.attempt.error ?? t("none")
    : `HTTP ${sent.attempt.status_code}`

/** A date and time in the language's format (the browser's time zone). */
export const formatTime = (language: Language, iso: string | null): string =>
  iso === null ? "—" : new Date(iso).toLocaleString(language === "ru" ? "ru-RU" : "en-GB", { dateStyle: "medium", timeStyle: "short" })

/**
 * A decimal string as sent by the API ("1234567.500000") in the language's convention: digits
 * grouped by thousands ("," in English, a no-break space in Russian) and the decimal separator ("."
 * or ","). Only the separators change: every digit stays as sent (no float arithmetic, no rounding).
 */
export const formatDecimal = (language: Language, amount: string): string => {
  const [whole = "0", fraction] = amount.split(".")
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, language === "ru" ? "\u00a0" : ",")
  return fraction === undefined ? grouped : `${grouped}${language === "ru" ? "," : "."}${fraction}`
}

/** A decimal rouble amount as sent by the API, with the currency sign (no float arithmetic). */
export const formatRub = (language: Language, amount: string): string => {
  const number = formatDecimal(language, amount.includes(".") ? amount : `${amount}.00`)
  return language === "ru" ? `${number}\u00a0₽` : `₽${number}`
}

/** A USDT amount as sent by the API (six decimals), in the language's convention, with the unit. */
export const formatUsdt = (language: Language, amount: string): string =>
  `${formatDecimal(language, amount)}${language === "ru" ? "\u00a0" : " "}USDT`

/** The USDT rate in roubles as sent by the API, in the language's convention, with the unit. */
export const formatRate = (language: Language, rate: string): string =>
  `${formatDecimal(language, rate)}${language === "ru" ? "\u00a0" : " "}₽/USDT`

/** Moscow's offset from UTC: three hours, all year (no daylight saving time since 2014). */
const moscowOffsetMs = 3 * 60 * 60 * 1000

/**
 * Where a daily `HH:MM` Moscow time (the terminal's `conversion_time`) falls in the browser's
 * time zone (or `timeZone`) on the Moscow day of `now`: the local `HH:MM` and whether that is the
 * day before (-1), the same day (0) or the next day (1). Null when `text` is not a valid `HH:MM`.
 */
export const moscowTimeLocally = (text: string, now: Date = new Date(), timeZone?: string): { readonly time: string; readonly day: -1 | 0 | 1 } | null => {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text.trim())
  if (match === null) return null
  const moscowToday = new Date(now.getTime() + moscowOffsetMs)
  const y = moscowToday.getUTCFullYear()
  const m = moscowToday.getUTCMonth()
  const d = moscowToday.getUTCDate()
  const instant = new Date(Date.UTC(y, m, d, Number(match[1]), Number(match[2])) - moscowOffsetMs)
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-GB", {
    ...(timeZone === undefined ? {} : { timeZone }),
    year: "numeric", month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23"
  }).formatToParts(instant).map((part) => [part.type, part.value]))
  const localDay = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day))
  const shift = Math.round((localDay - Date.UTC(y, m, d)) / 86_400_000)
  return { time: `${parts.hour}:${parts.minute}`, day: shift < 0 ? -1 : shift > 0 ? 1 : 0 }
}
