mod family;
mod k3;
mod k3_parser;
mod k3_props;
mod parser_props;
mod python_json;
