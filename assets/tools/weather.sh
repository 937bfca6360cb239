#!/bin/sh
# Demo tool for kimi-tui: fake, deterministic weather for a city.
# Input on stdin: {"city": "Beijing"}. Output: one JSON object on stdout.
# The city is data: it is only matched and printed, never evaluated.
input=$(cat)
# The JSON string value of "city", still escaped (so it can be printed back inside quotes).
city=$(printf '%s' "$input" | tr -d '\n' |
    sed -n -E 's/.*"city"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p')
if [ -z "$city" ]; then
    echo 'missing "city": give a city name, e.g. {"city": "Paris"}' >&2
    exit 2
fi
key=$(printf '%s' "$city" | tr '[:upper:]' '[:lower:]')
case "$key" in
    beijing)       weather="Sunny";         temp=25; humidity=40 ;;
    shanghai)      weather="Light rain";    temp=21; humidity=85 ;;
    tokyo)         weather="Clear";         temp=22; humidity=55 ;;
    london)        weather="Overcast";      temp=14; humidity=80 ;;
    paris)         weather="Partly cloudy"; temp=18; humidity=60 ;;
    "new york")    weather="Windy";         temp=16; humidity=50 ;;
    "san francisco") weather="Fog";         temp=15; humidity=90 ;;
    sydney)        weather="Sunny";         temp=27; humidity=45 ;;
    reykjavik)     weather="Snow";          temp=-2; humidity=75 ;;
    *)             weather="Sunny";         temp=20; humidity=50 ;;
esac
printf '{"city": "%s", "weather": "%s", "temp_c": %s, "humidity_pct": %s}\n' \
    "$city" "$weather" "$temp" "$humidity"
