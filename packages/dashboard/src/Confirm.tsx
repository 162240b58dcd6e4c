/** An inline confirmation: the question, Confirm (focused when shown) and Cancel. */
import type { ComponentChildren } from "preact"
import { useLayoutEffect, useRef } from "preact/hooks"
import { useDashboard } from "./Context.js"

export const Confirm = ({ id, question, busy, onConfirm, onCancel }: {
  id: string
  question: ComponentChildren
  busy: boolean
  onConfirm: () => void
  onCancel: () => void
}) => {
  const { t } = useDashboard()
  const confirm = useRef<HTMLButtonElement>(null)
  const dialog = useRef<HTMLDivElement>(null)
  // Before paint, so a key pressed right after the dialog shows already lands in it. When it goes
  // (confirmed, cancelled, Escape), the focus goes back to what had it (the button or field that
  // opened it), unless it has moved out of the dialog meanwhile: it fell to the page's body.
  useLayoutEffect(() => {
    const opener = document.activeElement as HTMLElement | null
    confirm.current?.focus()
    return () => {
      const now = document.activeElement
      const inDialog = now === null || now === document.body || dialog.current?.contains?.(now) === true
      if (inDialog && opener !== null && opener !== document.body && opener.isConnected) opener.focus()
    }
  }, [])
  return (
    <div class="confirm" role="alertdialog" aria-labelledby={`${id}-question`} ref={dialog}
      onKeyDown={(event) => {
        if (event.key === "Escape") onCancel()
      }}>
      <p id={`${id}-question`}>{question}</p>
      <button type="button" ref={confirm} disabled={busy} onClick={onConfirm}>{t("confirm")}</button>{" "}
      <button type="button" class="secondary" disabled={busy} onClick={onCancel}>{t("cancel")}</button>
    </div>
  )
}
