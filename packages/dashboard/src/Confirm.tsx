/** An inline confirmation: the question, Confirm (focused when shown) and Cancel. */
import { useLayoutEffect, useRef } from "preact/hooks"
import { useDashboard } from "./Context.js"

export const Confirm = ({ id, question, busy, onConfirm, onCancel }: {
  id: string
  question: string
  busy: boolean
  onConfirm: () => void
  onCancel: () => void
}) => {
  const { t } = useDashboard()
  const confirm = useRef<HTMLButtonElement>(null)
  // Before paint, so a key pressed right after the dialog shows already lands in it.
  useLayoutEffect(() => confirm.current?.focus(), [])
  return (
    <div class="confirm" role="alertdialog" aria-labelledby={`${id}-question`}
      onKeyDown={(event) => {
        if (event.key === "Escape") onCancel()
      }}>
      <p id={`${id}-question`}>{question}</p>
      <button type="button" ref={confirm} disabled={busy} onClick={onConfirm}>{t("confirm")}</button>{" "}
      <button type="button" class="secondary" disabled={busy} onClick={onCancel}>{t("cancel")}</button>
    </div>
  )
}
