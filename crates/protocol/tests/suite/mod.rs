mod family;
mod k3;
mod parser_props;
mod python_json;
