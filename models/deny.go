package models

// DeniedMessage is the reason an agent is given for a deny when the person who denied
// gave none (SPEC §6.1): "Denied by <person> in Gatehouse." — every deny carries one,
// as newer agents refuse a deny without a message and the model should know who said
// no and where. person "" (nobody recorded) gives "Denied in Gatehouse."
func DeniedMessage(person string) string {
	if person == "" {
		return "Denied in Gatehouse."
	}
	return "Denied by " + person + " in Gatehouse."
}
